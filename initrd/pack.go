package initrd

import (
	"bytes"
	"fmt"

	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
)

// packDictCap is the LZMA2 dictionary Pack uses. Payloads that fit a 256 KiB embed area are at
// most a few MiB uncompressed, so 8 MiB (xz preset 6) already sees the whole archive; a larger
// dictionary compresses no better and costs every decoder, the kernel's included, more memory.
const packDictCap = 8 << 20

// Pack returns the newc archive of files compressed as one xz stream with the CRC32 check
// (the only check the kernel's xz decoder verifies). The settings are fixed, so the same files
// always give the same bytes. An xz stream is always a multiple of 4 bytes long, so zero fill
// after it is valid xz stream padding.
func Pack(files Files) ([]byte, error) {
	var out bytes.Buffer
	// HashTable4 is both faster and, on Ignition-like JSON, smaller than go-xz's BinaryTree.
	cfg := xz.WriterConfig{DictCap: packDictCap, CheckSum: xz.CRC32, Matcher: lzma.HashTable4}
	xw, err := cfg.NewWriter(&out)
	if err != nil {
		return nil, fmt.Errorf("initrd: starting xz: %w", err)
	}
	if err := WriteNewc(xw, files); err != nil {
		return nil, err
	}
	if err := xw.Close(); err != nil {
		return nil, fmt.Errorf("initrd: finishing xz: %w", err)
	}
	return out.Bytes(), nil
}
