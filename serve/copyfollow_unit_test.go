package serve

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A response that read a copy which then ended short, and goes on with another attempt's
// copy that has the bytes, sends them from that copy's file: never from the first one's
// descriptor, whose space past what it wrote is preallocated zeros.
func TestFollowedCopySwitchesFile(t *testing.T) {
	const size, written = 1 << 20, 400 << 10
	data := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	copyFile := func(name string, n int) *localCopy {
		f, err := os.Create(filepath.Join(t.TempDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil { // as reserve leaves it: zeros past what is written
			t.Fatal(err)
		}
		if _, err := f.WriteAt(data[:n], 0); err != nil {
			t.Fatal(err)
		}
		c, err := newLocalCopy(f, size, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.advance(int64(n))
		return c
	}
	short, whole := copyFile("short", written), copyFile("whole", size)
	short.end(false)
	whole.end(true)

	version := &sourceFile{}
	version.local.Store(short)
	rec := httptest.NewRecorder()
	bw := newBodyWriter(rec, version, time.Minute)
	bw.ctx = context.Background()
	// Both spans are long enough to be sent by sendfile from the request's own descriptor.
	first := int64(300 << 10)
	if err := bw.copyOrigin(nil, 0, first); err != nil {
		t.Fatal(err)
	}
	version.local.Store(whole) // another attempt's copy, complete
	if err := bw.copyOrigin(nil, first, size-first); err != nil {
		t.Fatal(err)
	}
	bw.close()
	if got := rec.Body.Bytes(); !bytes.Equal(got, data) {
		at := 0
		for at < len(got) && at < len(data) && got[at] == data[at] {
			at++
		}
		t.Fatalf("the response differs from the object at byte %d of %d (%d sent)", at, size, len(got))
	}
	short.release()
	whole.release()
}
