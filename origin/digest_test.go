package origin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"testing"
)

func TestDigestReaderJudgesAWholeRead(t *testing.T) {
	data := bytes.Repeat([]byte("live iso bytes "), 1<<16) // ~960 KiB
	sum := sha256.Sum256(data)
	good := hex.EncodeToString(sum[:])
	tampered := append([]byte(nil), data...)
	tampered[len(tampered)/2] ^= 1

	// readAll reads like a writer of an image: the first blocks out of order (parsing), then
	// everything in 64 KiB steps but a skipped span (a patch), then the rest.
	readAll := func(d *DigestReader, size int) error {
		buf := make([]byte, 4096)
		for _, off := range []int64{0x8000, int64(size) - 4096, 0x10000} {
			if _, err := d.ReadAt(buf, off); err != nil {
				return err
			}
		}
		chunk := make([]byte, 64<<10)
		for off := 0; off < size; off += len(chunk) {
			if off >= 128<<10 && off < 320<<10 {
				continue // patched: never read from the object
			}
			if _, err := d.ReadAt(chunk[:min(len(chunk), size-off)], int64(off)); err != nil && err != io.EOF {
				return err
			}
		}
		return nil
	}

	d := NewDigestReader(bytes.NewReader(data), int64(len(data)), "s3://b/k", good)
	if err := readAll(d, len(data)); err != nil {
		t.Fatalf("reading the untouched object: %v", err)
	}
	if !d.Complete() {
		t.Error("a whole read in order (a patched span skipped) was not judged complete")
	}

	d = NewDigestReader(bytes.NewReader(tampered), int64(len(tampered)), "s3://b/k", good)
	err := readAll(d, len(tampered))
	var mismatch *DigestError
	if !errors.As(err, &mismatch) || mismatch.Want != good || mismatch.Object != "s3://b/k" {
		t.Fatalf("reading a tampered object whole: %v, want a *DigestError", err)
	}
	if _, err := d.ReadAt(make([]byte, 1), 0); !errors.As(err, &mismatch) {
		t.Errorf("a read after the mismatch: %v, want the *DigestError again", err)
	}

	// Part of the object only: nothing to judge, nothing refused.
	d = NewDigestReader(bytes.NewReader(tampered), int64(len(tampered)), "s3://b/k", good)
	if _, err := d.ReadAt(make([]byte, 1<<16), 0); err != nil {
		t.Fatal(err)
	}
	if d.Complete() {
		t.Error("a partial read was judged complete")
	}
}
