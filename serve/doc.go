// Package serve is an HTTP handler that serves nodes' customized ISOs and PXE artifacts
// composed over a pristine live ISO, without writing them anywhere: each response is the
// ISO's unchanged bytes, sent with sendfile where the transport allows, around the node's
// patches, which are prepared once and again only when the node's files change.
package serve
