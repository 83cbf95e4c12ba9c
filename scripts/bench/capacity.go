//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os/exec"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/bipgen"
)

// ignitionAreaSize is the stock RHCOS Ignition embed area.
const ignitionAreaSize = 256 << 10

// packedSize is the compressed size of a generated bootstrap-in-place config of size bytes,
// prepared as build prepares it, and its uncompressed newc archive.
func packedSize(size int) (int, []byte) {
	cfg, err := bipgen.Generate(bipgen.Options{Size: size, Seed: 1})
	if err != nil {
		fatal(err)
	}
	live, _, err := coreos.PrepareLiveIgnition(cfg, coreos.LiveIgnitionOptions{
		Installation: coreos.Installation{Disk: "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"},
	})
	if err != nil {
		fatal(err)
	}
	files := initrd.Files{initrd.IgnitionPath: live}
	packed, err := initrd.Pack(files)
	if err != nil {
		fatal(err)
	}
	var newc bytes.Buffer
	if err := initrd.WriteNewc(&newc, files); err != nil {
		fatal(err)
	}
	return len(packed), newc.Bytes()
}

// benchCapacity finds the largest generated bootstrap-in-place config that fits the 256 KiB
// area (to 1 kB), and compares sno-iso's compression with `xz -9 --check=crc32` on it.
func benchCapacity() {
	lo, hi := 150_000, 2_000_000
	for hi-lo > 1000 {
		mid := (lo + hi) / 2
		if n, _ := packedSize(mid); n <= ignitionAreaSize {
			lo = mid
		} else {
			hi = mid
		}
	}
	ours, newc := packedSize(lo)
	xz := exec.Command("xz", "-9", "--check=crc32", "-c")
	xz.Stdin = bytes.NewReader(newc)
	ref, err := xz.Output()
	if err != nil {
		fatalf("xz: %v", err)
	}
	fmt.Printf("\nLargest generated bootstrap-in-place config that fits the 256 KiB Ignition area: %d kB "+
		"(%d bytes compressed). sno-iso's xz: %d bytes, `xz -9 --check=crc32` of the same archive: %d bytes, ratio %.3f.\n",
		lo/1000, ours, ours, len(ref), float64(ours)/float64(len(ref)))
}
