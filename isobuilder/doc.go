// Package isobuilder reads ISO9660 live images exactly as coreos-installer does, presents a
// CoreOS live ISO as an immutable view (LiveISO), expresses edits as byte patches over it
// (Image), and materialises the result through sinks: a new file, the input in place, or a
// stream. It also derives media from a live ISO: minimal ISOs (from miniso.dat, or rebuilt
// with the hybrid MBR/GPT kept), ISOs with a grown Ignition area, and PXE files.
package isobuilder
