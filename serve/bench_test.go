// The download benchmarks report CPU time from getrusage, which Windows lacks.

//go:build unix

package serve

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// BenchmarkDownload compares a whole download of a customized 150 MiB ISO over loopback
// from this server (file spans by sendfile) with http.ServeContent over the same composed
// image (every byte copied through user space), the peer's design.
func BenchmarkDownload(b *testing.B) {
	iso := largeLookalike(b)
	h := newHarness(b, iso, map[string]string{"node": configA}, nil)
	b.Run("sendfile", func(b *testing.B) { benchGet(b, h.url+h.path("/node.iso"), "") })

	l, err := isobuilder.Open(iso)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	img, err := customized(l, initrd.Files{initrd.IgnitionPath: []byte(configA)})
	if err != nil {
		b.Fatal(err)
	}
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "node.iso", time.Time{}, io.NewSectionReader(img, 0, img.Size()))
	}))
	defer peer.Close()
	b.Run("ServeContent", func(b *testing.B) { benchGet(b, peer.URL+"/node.iso", "") })
}

// BenchmarkRange1KiB is the latency of a 1 KiB range read on a kept-alive connection.
func BenchmarkRange1KiB(b *testing.B) {
	h := newHarness(b, "", map[string]string{"node": configA}, nil)
	benchGet(b, h.url+h.path("/node.iso"), "bytes=400000-401023")
}

// benchGet reports, besides the time, the CPU time of the whole process (client and server:
// the client's share is the same whatever the server does) per GiB received.
func benchGet(b *testing.B, url, byteRange string) {
	client := &http.Client{}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if byteRange != "" {
		req.Header.Set("Range", byteRange)
	}
	var total int64
	cpu := processCPU()
	for b.Loop() {
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != resp.ContentLength {
			b.Fatal(fmt.Errorf("%d of %d bytes: %v", n, resp.ContentLength, err))
		}
		b.SetBytes(n)
		total += n
	}
	b.ReportMetric(float64((processCPU()-cpu).Milliseconds())/float64(total)*(1<<30), "cpu-ms/GiB")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
