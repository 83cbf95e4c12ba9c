// Package embed knows where a CoreOS live ISO keeps its embed areas and what is in them: the
// Ignition area (coreos/igninfo.json, IMAGES/IGNITION.IMG, the legacy coreiso+ header), the
// kernel-argument areas (coreos/kargs.json, the legacy coreKarg header), coreos/features.json
// and the coreos/miniso.dat table that rebuilds a minimal ISO. It sees the ISO only through
// the ISO interface, never through files on disk.
package embed
