// Package redfishtest is a fake BMC for tests: an httptest server on 127.0.0.1 that serves a
// Redfish tree (generated from a vendor Profile, or a DMTF mockup read in place) and adds what
// the mockups lack: state (virtual media, boot override, power with delayed transitions),
// headers (ETag, Allow, Location, X-Auth-Token), error bodies, sessions, task monitors and
// the vendors' deviations. Its virtual CD can fetch the inserted URL like a real BMC, and it
// records every request so tests can check what a client sent.
package redfishtest
