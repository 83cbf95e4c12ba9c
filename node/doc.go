// Package node makes one Single Node OpenShift node's boot media. It loads the node's inputs
// (the bootstrap-in-place Ignition, sno.yaml, install-config.yaml, keyfiles, customizations,
// overrides) and reports the files it read; it prepares them into a validated Node (the
// live Ignition with install-to-disk set, the payload for the live initramfs, the live
// kernel arguments); and it produces the node's media from a pristine live ISO: the
// customized Image, the minimal or grown DerivedISO, the PXE file set and its boot
// configurations, and the inspect report of an ISO. A server gets the same media as Composed
// values, spans over the ISO it streams without writing them (Media.Composed,
// Node.Initramfs). `sno-iso build`, `pxe build`, `serve`, `inspect` and Go programs all go
// through it, so they make the same bytes.
package node
