package origin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sno-iso/sno-iso/internal/s3test"
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

// TestS3ObjectWithSHA256Metadata reads objects that carry x-amz-meta-sha256 from a real S3
// store: the untouched one reads whole, the one whose bytes were replaced under the same
// metadata fails the read that completes it.
func TestS3ObjectWithSHA256Metadata(t *testing.T) {
	st := s3test.Start(t)
	isolate(t)
	st.Setenv(t, st.ReadOnly)
	st.CreateBucket(t, "isos", false)
	data := make([]byte, 3<<20+7)
	rand.NewChaCha8([32]byte{1}).Read(data)
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	tampered := append([]byte(nil), data...)
	tampered[2<<20] ^= 0x80
	put := func(key string, body []byte) {
		_, err := st.Client(st.ReadWrite).PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("isos"),
			Key: aws.String(key), Body: bytes.NewReader(body), Metadata: map[string]string{"sha256": strings.ToUpper(digest)}})
		if err != nil {
			t.Fatal(err)
		}
	}
	put("good.iso", data)
	put("tampered.iso", tampered)

	for _, tc := range []struct {
		key      string
		tampered bool
	}{{"good.iso", false}, {"tampered.iso", true}} {
		obj, err := Open(context.Background(), "s3://isos/"+tc.key, s3Options(st))
		if err != nil {
			t.Fatal(err)
		}
		if obj.SHA256() != digest {
			t.Errorf("%s: SHA256() = %q, want the metadata's %s", tc.key, obj.SHA256(), digest)
		}
		d := NewDigestReader(obj, obj.Size(), obj.String(), obj.SHA256())
		_, err = io.Copy(io.Discard, io.NewSectionReader(d, 0, obj.Size()))
		var mismatch *DigestError
		switch {
		case tc.tampered && !errors.As(err, &mismatch):
			t.Errorf("%s read whole: %v, want a *DigestError", tc.key, err)
		case tc.tampered && !strings.Contains(err.Error(), "s3://isos/tampered.iso"):
			t.Errorf("the error does not name the object: %v", err)
		case !tc.tampered && (err != nil || !d.Complete()):
			t.Errorf("%s read whole: %v, complete %v", tc.key, err, d.Complete())
		}
	}
}
