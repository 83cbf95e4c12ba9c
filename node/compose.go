package node

import (
	"bytes"
	"fmt"
	"io"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// Span is one piece of a Composed file: Size bytes of the base from BaseOffset, or the
// node's own bytes in Data.
type Span struct {
	BaseOffset int64
	Size       int64
	// Data is the node's bytes; nil for a span of the base.
	Data []byte
}

// Composed is one file of a node's media as spans laid end to end over a base (the pristine
// ISO, or the minimal or grown ISO made from it): what a server caches and streams without
// writing it, sending the base's spans with sendfile. It is immutable and safe for
// concurrent use when the base's ReadAt is.
type Composed struct {
	base  io.ReaderAt
	spans []Span
	size  int64
}

func newComposed(base io.ReaderAt) *Composed { return &Composed{base: base} }

func (c *Composed) addBase(off, size int64) {
	if size > 0 {
		c.spans = append(c.spans, Span{BaseOffset: off, Size: size})
		c.size += size
	}
}

func (c *Composed) addData(data []byte) {
	if len(data) > 0 {
		c.spans = append(c.spans, Span{Size: int64(len(data)), Data: data})
		c.size += int64(len(data))
	}
}

// zeros backs the zero tails of patches: an Ignition area is mostly zeros after its archive,
// and every Composed shares this block for them instead of holding a copy of its own.
var zeros [256 << 10]byte

// addPatch adds a patch's bytes: its own up to its zero tail, then the tail from zeros.
func (c *Composed) addPatch(data []byte) {
	own := len(bytes.TrimRight(data, "\x00"))
	c.addData(bytes.Clone(data[:own]))
	for tail := len(data) - own; tail > 0; {
		n := min(tail, len(zeros))
		c.addData(zeros[:n])
		tail -= n
	}
}

// composeImage lays img, an image over base, out as spans: the base's bytes between the
// patches.
func composeImage(base io.ReaderAt, img *isobuilder.Image) *Composed {
	c := newComposed(base)
	var pos int64
	for _, p := range img.Patches() {
		c.addBase(pos, p.Offset-pos)
		c.addPatch(p.Data)
		pos = p.Offset + int64(len(p.Data))
	}
	c.addBase(pos, img.Size()-pos)
	return c
}

// Base is what the spans of the base read.
func (c *Composed) Base() io.ReaderAt { return c.base }

// Size is the file's length.
func (c *Composed) Size() int64 { return c.size }

// Spans are the file's pieces in order. They share the Composed's data: do not modify it.
func (c *Composed) Spans() []Span { return append([]Span(nil), c.spans...) }

// ReadAt reads the file's bytes at off, following the io.ReaderAt contract.
func (c *Composed) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read at negative offset %d", off)
	}
	n := 0
	var start int64
	for _, s := range c.spans {
		if n == len(p) {
			break
		}
		pos := off + int64(n)
		if pos >= start+s.Size {
			start += s.Size
			continue
		}
		from := pos - start
		want := min(int64(len(p)-n), s.Size-from)
		if s.Data != nil {
			copy(p[n:], s.Data[from:from+want])
		} else if got, err := c.base.ReadAt(p[n:n+int(want)], s.BaseOffset+from); int64(got) < want {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n + got, fmt.Errorf("reading the base at offset %d: %w", s.BaseOffset+from+int64(got), err)
		}
		n += int(want)
		start += s.Size
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// writeTo writes the file's bytes to w.
func (c *Composed) writeTo(w io.Writer) error {
	for _, s := range c.spans {
		var err error
		if s.Data != nil {
			_, err = w.Write(s.Data)
		} else {
			_, err = io.Copy(w, io.NewSectionReader(c.base, s.BaseOffset, s.Size))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// StockInitramfs is the live initramfs of a pristine ISO, read and checked once: every
// node's PXE initramfs is its bytes followed by the node's payload.
type StockInitramfs struct {
	iso      *isobuilder.LiveISO
	file     isobuilder.PXEFile
	features embed.Features
}

// InspectInitramfs reads the whole live initramfs of iso and checks that it is a CoreOS live
// initramfs that is not customized yet (see isobuilder.InspectInitramfs).
func InspectInitramfs(iso *isobuilder.LiveISO) (*StockInitramfs, error) {
	f, err := iso.PXEFile(isobuilder.PXEInitramfs)
	if err != nil {
		return nil, err
	}
	features, err := isobuilder.InspectInitramfs(iso.PXEFileReader(f))
	if err != nil {
		return nil, err
	}
	return &StockInitramfs{iso: iso, file: f, features: features}, nil
}

// Initramfs is the node's PXE initramfs over stock: the ISO's live initramfs unchanged, then
// the node's payload as an archive of its own (isobuilder.InitramfsAppendix), what `pxe
// build` writes as initrd.img.
func (n *Node) Initramfs(stock *StockInitramfs) (*Composed, error) {
	appendix, err := isobuilder.InitramfsAppendix(stock.features, n.Payload)
	if err != nil {
		return nil, err
	}
	c := newComposed(stock.iso.Base())
	c.addBase(stock.file.Offset(), int64(stock.file.Length))
	c.addData(appendix)
	return c, nil
}
