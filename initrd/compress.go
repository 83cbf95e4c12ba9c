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

// zstdFrame passes on the bytes of one zstd frame from in and stops at its end, found by
// walking its block headers: the decoder reads ahead, and what follows the frame belongs to
// the next archive. It holds no more than a header at a time, whatever the frame's size.
type zstdFrame struct {
	in *bufio.Reader
	// left is how many bytes of the current piece (a header with the data it announces) are
	// still to pass on; next is the piece after it.
	left        int64
	next        zstdPiece
	lastBlock   bool
	hasChecksum bool
	err         error
}

type zstdPiece int

const (
	zstdFrameHeader zstdPiece = iota
	zstdBlock
	zstdChecksum
	zstdEnd
)

func newZstdFrame(in *bufio.Reader) *zstdFrame { return &zstdFrame{in: in, next: zstdFrameHeader} }

func (z *zstdFrame) Read(p []byte) (int, error) {
	for z.left == 0 {
		if z.err != nil {
			return 0, z.err
		}
		z.err = z.advance()
	}
	n, err := z.in.Read(p[:min(int64(len(p)), z.left)])
	z.left -= int64(n)
	if err == io.EOF {
		err = errors.New("truncated zstd frame")
	}
	return n, err
}

// advance measures the next piece of the frame from its header, which stays in in to be
// passed on; io.EOF once the frame is over.
func (z *zstdFrame) advance() error {
	peek := func(n int) ([]byte, error) {
		b, err := z.in.Peek(n)
		if err != nil {
			return nil, truncated(io.ErrUnexpectedEOF, "zstd frame")
		}
		return b, nil
	}
	switch z.next {
	case zstdFrameHeader:
		head, err := peek(5) // magic, checked by sniff, and the frame header descriptor
		if err != nil {
			return err
		}
		fhd := head[4]
		if fhd&0x08 != 0 {
			return errors.New("zstd frame header sets the reserved bit")
		}
		singleSegment := fhd&0x20 != 0
		z.hasChecksum = fhd&0x04 != 0
		headerLen := [4]int64{0, 1, 2, 4}[fhd&3]  // dictionary ID
		headerLen += [4]int64{0, 2, 4, 8}[fhd>>6] // frame content size
		if singleSegment && fhd>>6 == 0 {
			headerLen++ // a one-byte content size replaces the window descriptor
		}
		if !singleSegment {
			headerLen++ // window descriptor
		}
		z.left, z.next = 5+headerLen, zstdBlock
	case zstdBlock:
		raw, err := peek(3)
		if err != nil {
			return err
		}
		header := uint32(raw[0]) | uint32(raw[1])<<8 | uint32(raw[2])<<16
		size := int64(header >> 3)
		switch blockType := header >> 1 & 3; blockType {
		case 1: // RLE: one byte repeated size times
			size = 1
		case 3:
			return errors.New("zstd block of reserved type")
		}
		z.left = 3 + size
		if header&1 != 0 { // the last block
			z.next = zstdEnd
			if z.hasChecksum {
				z.next = zstdChecksum
			}
		}
	case zstdChecksum:
		z.left, z.next = 4, zstdEnd
	case zstdEnd:
		return io.EOF
	}
	return nil
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
