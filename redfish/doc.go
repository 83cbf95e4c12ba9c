// Package redfish is a Redfish client that boots a server from an ISO URL through its BMC's
// virtual media: it finds the System and a CD/DVD slot, inserts and ejects media, sets a
// one-time boot override and drives power, and absorbs the vendors' differences (sessions or
// Basic auth, ETags, task monitors, transient refusals) with plain net/http.
package redfish
