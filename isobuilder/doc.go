// Package isobuilder reads ISO9660 live images exactly as coreos-installer does, presents a
// CoreOS live ISO as an immutable view (LiveISO), expresses edits as byte patches over it
// (Image), and materialises the result through sinks: a new file, the input in place, or a
// stream.
package isobuilder
