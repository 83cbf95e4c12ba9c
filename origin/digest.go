package origin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"sync"
)

// SHA256Header is the header of the object's user metadata x-amz-meta-sha256: the sha256 of
// its bytes in lower-case hex, as `sno-iso download --upload` records it. S3 sends it with
// every GET, signed or pre-signed.
const SHA256Header = "X-Amz-Meta-Sha256"

func isSHA256(s string) bool {
	_, err := hex.DecodeString(s)
	return len(s) == 64 && err == nil
}

// DigestError is an object whose bytes do not hash to the sha256 its metadata records.
type DigestError struct {
	Object    string
	Want, Got string
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("%s: its bytes hash to sha256 %s, not the %s its x-amz-meta-sha256 metadata records: "+
		"the object was changed or damaged after it was uploaded", e.Object, e.Got, e.Want)
}

// maxDigestGap is the most a DigestReader reads by itself to close a gap before a read: a
// writer of a whole image skips the spans it patches, a few hundred KiB.
const maxDigestGap = 4 << 20

// DigestReader passes reads to an object and hashes its bytes as they are read in order
// from the start: once the last byte is hashed, the read that brought it fails with a
// *DigestError if the sha256 is not the one expected, so a reader of the whole object (a copy,
// an image written from it) never completes with other bytes. Reads behind or far ahead of the
// bytes hashed so far pass unhashed; a short gap ahead is read and hashed first. An object
// never read whole is never judged. It is safe for concurrent use.
type DigestReader struct {
	r      io.ReaderAt
	size   int64
	name   string
	want   string
	mu     sync.Mutex
	hash   hash.Hash
	hashed int64
	err    error
}

// NewDigestReader checks that the size bytes of r, named name in errors, hash to want
// (lower-case hex).
func NewDigestReader(r io.ReaderAt, size int64, name, want string) *DigestReader {
	return &DigestReader{r: r, size: size, name: name, want: want, hash: sha256.New()}
}

// ReadAt reads from the object, and fails the read that completes a whole object whose
// sha256 is not the one expected, and every read after it.
func (d *DigestReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := d.r.ReadAt(p, off)
	if n > 0 {
		if derr := d.advance(p[:n], off); derr != nil {
			return 0, derr
		}
	}
	return n, err
}

// Complete reports whether every byte was hashed and matched.
func (d *DigestReader) Complete() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hashed == d.size && d.err == nil
}

func (d *DigestReader) advance(p []byte, off int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return d.err
	}
	end := off + int64(len(p))
	if end <= d.hashed || d.hashed == d.size {
		return nil
	}
	if off > d.hashed {
		if off-d.hashed > maxDigestGap {
			return nil
		}
		gap := make([]byte, off-d.hashed)
		if _, err := d.r.ReadAt(gap, d.hashed); err != nil {
			return nil // the caller's own read succeeded; a later one may close the gap
		}
		d.hash.Write(gap)
		d.hashed = off
	}
	d.hash.Write(p[d.hashed-off:])
	d.hashed = end
	if d.hashed == d.size {
		if got := hex.EncodeToString(d.hash.Sum(nil)); got != d.want {
			d.err = &DigestError{Object: d.name, Want: d.want, Got: got}
			return d.err
		}
	}
	return nil
}
