// Package serve is an HTTP handler that serves nodes' customized ISOs, minimal ISOs and PXE
// artifacts composed over a pristine live ISO, without writing them anywhere: each response
// is the ISO's unchanged bytes, sent with sendfile where the transport allows, around the
// node's patches. Each node is a directory that package node loads and prepares; it is
// prepared on first request and again only when one of the files it read changes. serve
// composes nothing itself: it streams the spans node composes (node.Media, Node.Initramfs),
// the same code `build` and `pxe build` run, so they cannot disagree about a byte.
//
// The media carry the cluster's private keys, and BMCs cannot send credentials: each node's
// media are published under a capability path, /<token>/<node>.iso, derived from a secret
// shared by every server over the same nodes directory (package capability makes and checks
// them).
package serve
