package initrd

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// format is what an archive in an initrd starts with.
type format int

const (
	formatUnknown format = iota
	formatNewc
	formatGzip
	formatXZ
	formatZstd
	formatZstdSkippable
)

func (f format) String() string {
	switch f {
	case formatNewc:
		return "newc cpio"
	case formatGzip:
		return "gzip"
	case formatXZ:
		return "xz"
	case formatZstd, formatZstdSkippable:
		return "zstd"
	}
	return "unrecognized"
}

// sniffLen is how many bytes sniff needs to tell every format apart.
const sniffLen = 6

var (
	gzipMagic = []byte{0x1f, 0x8b}
	xzMagic   = []byte{0xfd, '7', 'z', 'X', 'Z', 0}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// sniff identifies the archive that starts with b (up to sniffLen bytes).
func sniff(b []byte) format {
	switch {
	case bytes.HasPrefix(b, gzipMagic):
		return formatGzip
	case bytes.HasPrefix(b, xzMagic):
		return formatXZ
	case bytes.HasPrefix(b, zstdMagic):
		return formatZstd
	case len(b) >= 4 && binary.LittleEndian.Uint32(b)&^0xf == 0x184d2a50:
		return formatZstdSkippable
	case bytes.HasPrefix(b, []byte("070701")) || bytes.HasPrefix(b, []byte("070702")):
		return formatNewc
	}
	return formatUnknown
}

// maxWindow bounds the xz dictionary and the zstd window that an archive may ask for, since
// the decoders allocate them up front. It is the dictionary of xz -9, which coreos-installer
// uses, and far above the 8 MiB window of zstd -19.
const maxWindow = 64 << 20

// checkXZDictionary rejects an xz stream at the start of in whose first block asks for a
// dictionary larger than maxWindow. liblzma gives every block of a stream the same
// filters, so the first block stands for all of them. Headers it cannot parse are left for
// the xz decoder to report.
func checkXZDictionary(in *bufio.Reader) error {
	const streamHeaderLen = 12
	head, _ := in.Peek(streamHeaderLen + 1)
	if len(head) <= streamHeaderLen || head[streamHeaderLen] == 0 {
		return nil // truncated, or no block at all (index indicator)
	}
	blockHeaderLen := (int(head[streamHeaderLen]) + 1) * 4
	block, _ := in.Peek(streamHeaderLen + blockHeaderLen)
	if len(block) < streamHeaderLen+blockHeaderLen {
		return nil
	}
	dict, err := XZBlockDictionary(block[streamHeaderLen:])
	if err == nil && dict > maxWindow {
		return fmt.Errorf("xz dictionary of %d bytes is larger than the %d bytes this reader allows", dict, maxWindow)
	}
	return nil
}

// readZstdFrame copies one zstd frame from in, walking its block headers to find where it ends:
// the decoder reads ahead, and what follows the frame belongs to the next archive. The frame
// may be at most limit bytes.
func readZstdFrame(in *bufio.Reader, limit int64) ([]byte, error) {
	var frame bytes.Buffer
	take := func(n int64) ([]byte, error) {
		if int64(frame.Len())+n > limit {
			return nil, errTooLarge(limit)
		}
		start := frame.Len()
		if _, err := io.CopyN(&frame, in, n); err != nil {
			return nil, truncated(err, "zstd frame")
		}
		return frame.Bytes()[start:], nil
	}
	if _, err := take(4); err != nil { // magic, checked by sniff
		return nil, err
	}
	descriptor, err := take(1)
	if err != nil {
		return nil, err
	}
	fhd := descriptor[0]
	singleSegment := fhd&0x20 != 0
	hasChecksum := fhd&0x04 != 0
	if fhd&0x08 != 0 {
		return nil, errors.New("zstd frame header sets the reserved bit")
	}
	headerLen := [4]int64{0, 1, 2, 4}[fhd&3]  // dictionary ID
	headerLen += [4]int64{0, 2, 4, 8}[fhd>>6] // frame content size
	if singleSegment && fhd>>6 == 0 {
		headerLen++ // a one-byte content size replaces the window descriptor
	}
	if !singleSegment {
		headerLen++ // window descriptor
	}
	if _, err := take(headerLen); err != nil {
		return nil, err
	}
	for {
		raw, err := take(3)
		if err != nil {
			return nil, err
		}
		header := uint32(raw[0]) | uint32(raw[1])<<8 | uint32(raw[2])<<16
		last := header&1 != 0
		size := int64(header >> 3)
		switch blockType := header >> 1 & 3; blockType {
		case 1: // RLE: one byte repeated size times
			size = 1
		case 3:
			return nil, errors.New("zstd block of reserved type")
		}
		if _, err := take(size); err != nil {
			return nil, err
		}
		if last {
			break
		}
	}
	if hasChecksum {
		if _, err := take(4); err != nil {
			return nil, err
		}
	}
	return frame.Bytes(), nil
}

// skipZstdSkippableFrame discards a zstd skippable frame (magic, 4-byte length, data).
func skipZstdSkippableFrame(in *bufio.Reader) error {
	var header [8]byte
	if _, err := io.ReadFull(in, header[:]); err != nil {
		return truncated(err, "zstd skippable frame")
	}
	if _, err := io.CopyN(io.Discard, in, int64(binary.LittleEndian.Uint32(header[4:]))); err != nil {
		return truncated(err, "zstd skippable frame")
	}
	return nil
}
