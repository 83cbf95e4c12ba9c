// Package isobuilder reads ISO9660 live images exactly as coreos-installer does, presents a
// CoreOS live ISO as an immutable, read-only view (LiveISO, from a file with Open or from any
// io.ReaderAt with OpenReader), expresses edits as byte patches over it (Image), and
// materialises the result through sinks: a new file, the input in place, or a stream. Every
// file it writes goes through a Stage, which commits a set of outputs atomically. It also
// derives media from a live ISO: minimal ISOs (from miniso.dat, or rebuilt with the hybrid
// MBR/GPT kept and the source's dates), ISOs with a grown Ignition area, and PXE files.
package isobuilder
