package isobuilder

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
)

// Patch replaces len(Data) bytes at Offset.
type Patch struct {
	Offset int64
	Data   []byte
}

func (p Patch) end() int64 { return p.Offset + int64(len(p.Data)) }

// Image is an immutable view of an ISO: base bytes with sorted, non-overlapping patches laid
// over them. It never holds the base in memory; sinks (WriteFile, WriteInPlace, WriteStream)
// materialise it. An Image is safe for concurrent use when its base's ReadAt is (an *os.File
// is).
type Image struct {
	base    io.ReaderAt
	size    int64
	patches []Patch // sorted by Offset, non-overlapping, non-empty, owned by the Image
}

// NewImage returns base with patches applied. Patches are sorted by offset; overlapping patches
// or a patch outside [0,size) is an error naming the offsets. Empty patches change nothing and
// are dropped. The Image keeps its own copy of each patch's data.
func NewImage(base io.ReaderAt, size int64, patches ...Patch) (*Image, error) {
	if base == nil {
		return nil, errors.New("isobuilder: image has no base")
	}
	if size < 0 {
		return nil, fmt.Errorf("isobuilder: negative image size %d", size)
	}
	img := &Image{base: base, size: size}
	return img.With(patches...)
}

// With returns a new Image with more patches. A new patch may not overlap an existing one or
// another new one; img itself is unchanged.
func (img *Image) With(patches ...Patch) (*Image, error) {
	merged := slices.Clone(img.patches)
	for _, p := range patches {
		if p.Offset < 0 {
			return nil, fmt.Errorf("isobuilder: patch at offset %d: negative offset", p.Offset)
		}
		if p.Offset > img.size || int64(len(p.Data)) > img.size-p.Offset {
			return nil, fmt.Errorf("isobuilder: patch at offset %d (%d bytes) ends beyond the image size %d",
				p.Offset, len(p.Data), img.size)
		}
		if len(p.Data) > 0 {
			merged = append(merged, Patch{Offset: p.Offset, Data: bytes.Clone(p.Data)})
		}
	}
	slices.SortStableFunc(merged, func(a, b Patch) int { return cmp.Compare(a.Offset, b.Offset) })
	for i := 1; i < len(merged); i++ {
		prev, cur := merged[i-1], merged[i]
		if prev.end() > cur.Offset {
			return nil, fmt.Errorf("isobuilder: patch at offset %d (%d bytes, up to %d) overlaps patch at offset %d",
				prev.Offset, len(prev.Data), prev.end(), cur.Offset)
		}
	}
	return &Image{base: img.base, size: img.size, patches: merged}, nil
}

// Size is the length of the composed image in bytes (the base's length).
func (img *Image) Size() int64 { return img.size }

// Patches returns the patches in offset order. The result is a copy: changing it does not
// change the Image.
func (img *Image) Patches() []Patch {
	out := make([]Patch, len(img.patches))
	for i, p := range img.patches {
		out[i] = Patch{Offset: p.Offset, Data: bytes.Clone(p.Data)}
	}
	return out
}

// ReadAt reads the composed bytes at off, following the io.ReaderAt contract.
func (img *Image) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("isobuilder: read at negative offset %d", off)
	}
	if off >= img.size {
		return 0, io.EOF
	}
	var tailErr error
	if remaining := img.size - off; int64(len(p)) > remaining {
		p = p[:remaining]
		tailErr = io.EOF
	}
	// i is the first patch that ends after off.
	i := sort.Search(len(img.patches), func(i int) bool { return img.patches[i].end() > off })
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if i < len(img.patches) && img.patches[i].Offset <= pos {
			n += copy(p[n:], img.patches[i].Data[pos-img.patches[i].Offset:])
			i++
			continue
		}
		end := len(p)
		if i < len(img.patches) && img.patches[i].Offset-off < int64(end) {
			end = int(img.patches[i].Offset - off)
		}
		got, err := img.base.ReadAt(p[n:end], pos)
		if got < end-n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n + got, fmt.Errorf("isobuilder: reading base at offset %d: %w", pos+int64(got), err)
		}
		n = end
	}
	return n, tailErr
}
