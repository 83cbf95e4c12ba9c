package node

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"unsafe"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// readAll reads r's size bytes through ReadAt in uneven pieces, as range requests do.
func readAll(t *testing.T, r io.ReaderAt, size int64) []byte {
	t.Helper()
	out := make([]byte, 0, size)
	for off := int64(0); off < size; {
		buf := make([]byte, min(size-off, 77777))
		n, err := r.ReadAt(buf, off)
		if int64(n) < int64(len(buf)) {
			t.Fatalf("ReadAt(%d bytes at %d): %d, %v", len(buf), off, n, err)
		}
		out, off = append(out, buf...), off+int64(n)
	}
	if n, err := r.ReadAt(make([]byte, 1), size); n != 0 || err != io.EOF {
		t.Errorf("ReadAt past the end: %d, %v, want io.EOF", n, err)
	}
	return out
}

// The composed ISO a server streams is the Image build writes, byte for byte, over the ISO
// that Media customized: the pristine ISO, or the minimal ISO the caller shares.
func TestMediaComposedIsTheImage(t *testing.T) {
	iso := openFixture(t, "embed-areas-2023-07.x86_64.iso")
	n := &Node{Payload: initrd.Files{initrd.IgnitionPath: []byte(`{"ignition":{"version":"3.2.0"}}`)}}
	full, err := n.Media(context.Background(), iso, MediaOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	c := full.Composed()
	if c.Base() != iso.Base() || c.Size() != full.Image.Size() {
		t.Fatalf("composed over %v, %d bytes; want the ISO's base, %d bytes", c.Base(), c.Size(), full.Image.Size())
	}
	if !bytes.Equal(readAll(t, c, c.Size()), readAll(t, full.Image, full.Image.Size())) {
		t.Error("the composed full ISO differs from its Image")
	}

	opts := isobuilder.MinimalOptions{RootfsURL: "http://192.0.2.1/rootfs.img"}
	shared, err := MinimalISO(context.Background(), iso, t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	minimal, err := n.Media(context.Background(), iso, MediaOptions{Minimal: true, MinimalOptions: opts, MinimalBase: shared.LiveISO, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if minimal.Derived != nil || minimal.Composed().Base() != shared.Base() {
		t.Fatalf("Media made its own minimal ISO (%v) instead of using the shared one", minimal.Derived)
	}
	own, err := n.Media(context.Background(), iso, MediaOptions{Minimal: true, MinimalOptions: opts, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Derived.Close()
	if !bytes.Equal(readAll(t, minimal.Composed(), minimal.Image.Size()), readAll(t, own.Image, own.Image.Size())) {
		t.Error("the node's ISO over the shared minimal ISO differs from the one over its own")
	}
	if len(minimal.Warnings) != 1 || minimal.Warnings[0].Kind != MinimalOverDHCP {
		t.Errorf("warnings over the shared minimal ISO: %q", minimal.Warnings)
	}
	// Patched in place, the pristine ISO would get the minimal ISO's patches.
	if err := minimal.Write(context.Background(), isobuilder.Output{InPlace: "unused.iso"}); !errors.Is(err, isobuilder.ErrDerivedInPlace) {
		t.Errorf("writing the ISO over the shared minimal ISO in place: %v, want ErrDerivedInPlace", err)
	}
}

// A node's composed ISO holds in memory its own bytes (the Ignition area's archive, the
// kernel arguments), not the area's zero tail: that comes from one block every node shares,
// which is what lets serve keep many nodes prepared. The bytes are the image's all the same.
func TestComposedHoldsNoZeroTail(t *testing.T) {
	iso := openFixture(t, "embed-areas-2023-07.x86_64.iso")
	n := &Node{Payload: initrd.Files{initrd.IgnitionPath: bytes.Repeat([]byte(`{"ignition":{"version":"3.2.0"}} `), 1000)}}
	media, err := n.Media(context.Background(), iso, MediaOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	packed, err := initrd.Pack(n.Payload)
	if err != nil {
		t.Fatal(err)
	}
	c := media.Composed()
	held, inMemory := 0, 0
	shared := unsafe.SliceData(zeros[:])
	for _, sp := range c.Spans() {
		if sp.Data == nil {
			continue
		}
		inMemory += len(sp.Data)
		if p := unsafe.SliceData(sp.Data); uintptr(unsafe.Pointer(p)) < uintptr(unsafe.Pointer(shared)) ||
			uintptr(unsafe.Pointer(p)) >= uintptr(unsafe.Pointer(shared))+uintptr(len(zeros)) {
			held += cap(sp.Data)
		}
	}
	if held > len(packed) {
		t.Errorf("the composed ISO holds %d bytes of its own for %d bytes in memory, a %d-byte archive", held, inMemory, len(packed))
	}
	if !bytes.Equal(readAll(t, c, c.Size()), readAll(t, media.Image, media.Image.Size())) {
		t.Error("the composed ISO differs from its Image")
	}
}
