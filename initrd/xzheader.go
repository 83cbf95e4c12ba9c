package initrd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// CheckXZDictionaries refuses an xz stream whose blocks ask for an LZMA2 dictionary larger
// than limit bytes, which a decoder would allocate up front, and returns the uncompressed
// size the stream's index declares (a bound callers can check before decoding). It finds the
// blocks through the index at the end of the stream, which must be a single stream with
// nothing after it.
func CheckXZDictionaries(s []byte, limit uint64) (uint64, error) {
	const headerLen, footerLen = 12, 12
	if len(s) < headerLen+footerLen {
		return 0, fmt.Errorf("xz stream is only %d bytes", len(s))
	}
	footer := s[len(s)-footerLen:]
	if string(footer[10:]) != "YZ" {
		return 0, errors.New("xz stream does not end with an xz footer")
	}
	indexEnd := len(s) - footerLen
	indexStart := int64(indexEnd) - (int64(binary.LittleEndian.Uint32(footer[4:8]))+1)*4
	if indexStart < headerLen || s[indexStart] != 0 {
		return 0, errors.New("xz stream footer does not point at an index")
	}
	index := s[indexStart+1 : indexEnd]
	count, index, err := xzUvarint(index)
	if err != nil {
		return 0, err
	}
	blockStart, total := uint64(headerLen), uint64(0)
	for i := uint64(0); i < count; i++ {
		var unpadded, uncompressed uint64
		if unpadded, index, err = xzUvarint(index); err != nil {
			return 0, err
		}
		if uncompressed, index, err = xzUvarint(index); err != nil {
			return 0, err
		}
		if total += uncompressed; total < uncompressed {
			return 0, fmt.Errorf("xz index: the block sizes add up to more than %d bytes", uint64(math.MaxUint64))
		}
		if unpadded > uint64(len(s)) || blockStart >= uint64(indexStart) {
			return 0, fmt.Errorf("xz block %d lies past the index", i)
		}
		dict, err := XZBlockDictionary(s[blockStart:indexStart])
		if err != nil {
			return 0, fmt.Errorf("xz block %d: %w", i, err)
		}
		if dict > limit {
			return 0, fmt.Errorf("xz block %d needs a %d-byte dictionary, more than the %d-byte limit", i, dict, limit)
		}
		blockStart += (unpadded + 3) &^ 3
	}
	return total, nil
}

// XZBlockDictionary returns the LZMA2 dictionary size in the xz block header at the start of
// b (0 when no filter is LZMA2). This is the one parser of xz block headers.
func XZBlockDictionary(b []byte) (uint64, error) {
	const lzma2FilterID = 0x21
	if len(b) < 2 || b[0] == 0 || (int(b[0])+1)*4 > len(b) {
		return 0, errors.New("bad block header size")
	}
	header := b[2 : (int(b[0])+1)*4]
	flags := b[1]
	var err error
	for _, present := range []bool{flags&0x40 != 0, flags&0x80 != 0} { // compressed, uncompressed size
		if present {
			if _, header, err = xzUvarint(header); err != nil {
				return 0, err
			}
		}
	}
	for range int(flags&3) + 1 {
		var id, propsLen uint64
		if id, header, err = xzUvarint(header); err != nil {
			return 0, err
		}
		if propsLen, header, err = xzUvarint(header); err != nil {
			return 0, err
		}
		if propsLen > uint64(len(header)) {
			return 0, errors.New("filter properties run past the block header")
		}
		props := header[:propsLen]
		header = header[propsLen:]
		if id != lzma2FilterID {
			continue
		}
		if propsLen != 1 || props[0]&0x3f > 40 {
			return 0, errors.New("bad LZMA2 properties")
		}
		bits := uint64(props[0] & 0x3f)
		if bits == 40 {
			return 1<<32 - 1, nil
		}
		return (2 | bits&1) << (bits/2 + 11), nil
	}
	return 0, nil
}

// xzUvarint reads one of xz's multibyte integers, which use the same encoding as Go's
// unsigned varints.
func xzUvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, errors.New("bad xz integer")
	}
	return v, b[n:], nil
}
