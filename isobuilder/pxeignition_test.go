package isobuilder

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/cavaliercoder/go-cpio"
	"github.com/klauspost/compress/zstd"
	"github.com/sno-iso/sno-iso/initrd"
)

// A wrapped config unwraps to the same bytes, also after another archive; an archive
// without config.ign is a typed error.
func TestWrapUnwrapIgnition(t *testing.T) {
	for _, config := range [][]byte{[]byte(`{"ignition":{"version":"3.2.0"}}`), {}} {
		wrapped, err := WrapIgnition(config)
		if err != nil {
			t.Fatal(err)
		}
		other, err := initrd.Pack(initrd.Files{"etc/hostname": []byte("node\n")})
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnwrapIgnition(context.Background(), bytes.NewReader(append(other, wrapped...)))
		if err != nil || !bytes.Equal(got, config) {
			t.Errorf("UnwrapIgnition = %q, %v; want %q", got, err, config)
		}
		if _, err := UnwrapIgnition(context.Background(), bytes.NewReader(other)); !errors.Is(err, ErrNoIgnitionInArchive) {
			t.Errorf("an archive without config.ign: %v", err)
		}
	}
}

// A crafted initrd whose config.ign decompresses to 100 MiB is refused from the member's
// header, not held in memory: an Ignition config is at most initrd.MaxIgnitionSize.
func TestUnwrapIgnitionBoundsTheConfig(t *testing.T) {
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	cw := cpio.NewWriter(zw)
	const size = 100 << 20
	if err := cw.WriteHeader(&cpio.Header{Name: initrd.IgnitionPath, Mode: cpio.ModeRegular | 0o600, Size: size}); err != nil {
		t.Fatal(err)
	}
	if _, err := cw.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = UnwrapIgnition(context.Background(), bytes.NewReader(buf.Bytes()))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), initrd.IgnitionPath) || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("a %d-byte initrd holding a 100 MiB config.ign: %v", buf.Len(), err)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 32<<20 {
		t.Errorf("refusing it allocated %d bytes", allocated)
	}
}

// UnwrapIgnition ends with its context's error (a signal in `pxe ignition unwrap`).
func TestUnwrapIgnitionEndsWithItsContext(t *testing.T) {
	wrapped, err := WrapIgnition([]byte(`{"ignition":{"version":"3.2.0"}}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := UnwrapIgnition(ctx, bytes.NewReader(wrapped)); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
