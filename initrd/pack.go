package initrd

import (
	"bytes"
	"fmt"

	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
)

// The LZMA2 dictionary Pack uses is the smallest power of two that holds the whole archive,
// between these bounds: a dictionary larger than the input compresses no better, costs time
// to set up, and costs every decoder (the kernel's included) memory. Payloads that fit a
// 256 KiB embed area are at most a few MiB uncompressed; 8 MiB is xz preset 6.
const (
	minDictCap = 64 << 10
	maxDictCap = 8 << 20
)

// dictCap returns the dictionary size for an archive of n bytes; it depends on n alone, so
// the same files still give the same bytes.
func dictCap(n int) int {
	d := minDictCap
	for d < n && d < maxDictCap {
		d <<= 1
	}
	return d
}

// Pack returns the newc archive of files compressed as one xz stream with the CRC32 check
// (the only check the kernel's xz decoder verifies). The settings are fixed, so the same files
// always give the same bytes. An xz stream is always a multiple of 4 bytes long, so zero fill
// after it is valid xz stream padding.
func Pack(files Files) ([]byte, error) {
	var archive bytes.Buffer
	if err := WriteNewc(&archive, files); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	// HashTable4 is both faster and, on Ignition-like JSON, smaller than go-xz's BinaryTree.
	cfg := xz.WriterConfig{DictCap: dictCap(archive.Len()), CheckSum: xz.CRC32, Matcher: lzma.HashTable4}
	xw, err := cfg.NewWriter(&out)
	if err != nil {
		return nil, fmt.Errorf("initrd: starting xz: %w", err)
	}
	if _, err := xw.Write(archive.Bytes()); err != nil {
		return nil, fmt.Errorf("initrd: compressing: %w", err)
	}
	if err := xw.Close(); err != nil {
		return nil, fmt.Errorf("initrd: finishing xz: %w", err)
	}
	return out.Bytes(), nil
}
