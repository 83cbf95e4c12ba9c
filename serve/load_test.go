package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// mkliveisoTools are what scripts/mkliveiso --no-miniso runs, with their Debian packages.
var mkliveisoTools = map[string]string{
	"xorriso": "xorriso", "grub-mkimage": "grub-common", "mkfs.fat": "dosfstools", "mcopy": "mtools",
	"cpio": "cpio", "xz": "xz-utils", "dpkg-deb": "dpkg", "numfmt": "coreutils",
}

// largeLookalike builds (once, cached in .cache/) a bootable RHCOS look-alike of about
// 150 MiB, with a real live initramfs, or skips the test naming the missing tool.
func largeLookalike(t testing.TB) string {
	t.Helper()
	for tool, pkg := range mkliveisoTools {
		testenv.Tool(t, tool, pkg)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, ".cache", "serve-load", "rhcos-lookalike-120m.iso")
	if _, err := isobuilder.Open(path); err == nil {
		return path
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	out, err := exec.Command(filepath.Join(root, "scripts", "mkliveiso"), "--rootfs-size", "120M", "--no-miniso", tmp).CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/mkliveiso: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoad: 32 clients at once, random single and multiple range reads and whole downloads
// of a customized 150 MiB ISO, every byte compared with the built file; afterwards the open
// descriptors and the memory are back where they were.
func TestLoad(t *testing.T) {
	testenv.Long(t, "the load test builds a 150 MiB ISO")
	iso := largeLookalike(t)
	config := `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/load","contents":{"source":"data:,` + strings.Repeat("x", 50000) + `"}}]}}`
	built := buildExpected(t, iso, config)
	expected, err := os.Open(built)
	if err != nil {
		t.Fatal(err)
	}
	defer expected.Close()
	info, _ := expected.Stat()
	size := info.Size()

	runtime.GC()
	debug.FreeOSMemory()
	fdsBefore, rssBefore := openFDs(t), rss(t)

	h := newHarness(t, iso, map[string]string{"node": config}, func(c *testSetup) { c.MaxConcurrent = 64 })
	// Prepare before measuring the allocations of serving; the look-alike has a real live
	// initramfs, so the PXE one can be checked too.
	if resp, _ := h.get("/node.iso", "Range: bytes=0-0"); resp.StatusCode != 206 {
		t.Fatalf("first request: %d", resp.StatusCode)
	}
	packed, err := initrd.Pack(initrd.Files{initrd.IgnitionPath: []byte(config)})
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := h.get("/node/initrd.img"); resp.StatusCode != 200 || !bytes.Equal(body, append(h.pxeBytes("initrd.img"), packed...)) {
		t.Errorf("/node/initrd.img: %d, not the stock initramfs followed by the node's archive", resp.StatusCode)
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	const clients, rangeReads, fullDownloads = 32, 40, 1
	// Every client downloads the whole ISO once; under the race detector a few do, so that
	// the run stays within minutes while 32 clients still read at once.
	fullDownloaders := clients
	if raceEnabled {
		fullDownloaders = 4
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var downloaded int64
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 9))
			buf, want := make([]byte, 1<<20), make([]byte, 1<<20)
			ops := rangeReads + fullDownloads
			for i := range ops {
				var n int64
				var err error
				switch {
				case c < fullDownloaders && i == c%ops: // the whole ISO, once per client, at different moments
					n, err = fullDownload(client, h.url+h.path("/node.iso"), expected, size, buf, want)
				case i%7 == 3:
					n, err = multiRangeRead(client, h.url+h.path("/node.iso"), expected, size, rng)
				default:
					n, err = rangeRead(client, h.url+h.path("/node.iso"), expected, size, rng, buf, want)
				}
				if err != nil {
					errs <- fmt.Errorf("client %d, request %d: %w", c, i, err)
					return
				}
				mu.Lock()
				downloaded += n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d MiB served to %d clients; %d MiB allocated by server and clients together", downloaded>>20, clients, allocated>>20)
	// Clients and server together: small buffers per request, never the ISO. The race
	// detector's run moves too few bytes to tell, and its shadow memory inflates the RSS:
	// make test runs this test without it too.
	if !raceEnabled && allocated > uint64(downloaded/20) {
		t.Errorf("%d bytes allocated to serve %d bytes: allocation grows with the data", allocated, downloaded)
	}

	client.CloseIdleConnections()
	h.http.Close()
	h.srv.Close()
	runtime.GC()
	debug.FreeOSMemory()
	if fds := openFDs(t); fds > fdsBefore+2 {
		t.Errorf("%d open descriptors after the load, %d before", fds, fdsBefore)
	}
	if r := rss(t); !raceEnabled && r > rssBefore+64<<20 {
		t.Errorf("RSS %d MiB after the load, %d MiB before", r>>20, rssBefore>>20)
	}
}

// buildExpected writes the ISO customized with config, as build does, to compare with.
func buildExpected(t *testing.T, isoPath, config string) string {
	t.Helper()
	iso, err := isobuilder.Open(isoPath)
	if err != nil {
		t.Fatal(err)
	}
	defer iso.Close()
	img, err := customized(iso, initrd.Files{initrd.IgnitionPath: []byte(config)})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "built.iso")
	if err := isobuilder.WriteFile(context.Background(), img, out, isobuilder.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// fullDownload reads the whole file and compares it, 1 MiB at a time, with expected.
func fullDownload(client *http.Client, url string, expected io.ReaderAt, size int64, buf, want []byte) (int64, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != size {
		return 0, fmt.Errorf("whole download: %s, Content-Length %d, want 200 and %d", resp.Status, resp.ContentLength, size)
	}
	var off int64
	for {
		n, err := io.ReadFull(resp.Body, buf)
		if n > 0 {
			if err := compareAt(expected, buf[:n], want[:n], off); err != nil {
				return off, err
			}
			off += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return off, err
		}
	}
	if off != size {
		return off, fmt.Errorf("whole download: %d bytes, want %d", off, size)
	}
	return off, nil
}

// rangeRead reads a random range of up to 1 MiB, often across the embed area.
func rangeRead(client *http.Client, url string, expected io.ReaderAt, size int64, rng *rand.Rand, buf, want []byte) (int64, error) {
	n := 1 + rng.Int64N(int64(len(buf)))
	off := rng.Int64N(size - n + 1)
	if rng.IntN(3) == 0 { // near the start, where the patches are
		off = rng.Int64N(min(4<<20, size-n+1))
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 206 || resp.ContentLength != n {
		return 0, fmt.Errorf("range %d+%d: %s, Content-Length %d", off, n, resp.Status, resp.ContentLength)
	}
	if _, err := io.ReadFull(resp.Body, buf[:n]); err != nil {
		return 0, fmt.Errorf("range %d+%d: %w", off, n, err)
	}
	return n, compareAt(expected, buf[:n], want[:n], off)
}

// multiRangeRead asks for three small ranges in one request.
func multiRangeRead(client *http.Client, url string, expected io.ReaderAt, size int64, rng *rand.Rand) (int64, error) {
	var spec []string
	var ranges [][2]int64
	for range 3 {
		off := rng.Int64N(size - 4096)
		n := 1 + rng.Int64N(4096)
		spec = append(spec, fmt.Sprintf("%d-%d", off, off+n-1))
		ranges = append(ranges, [2]int64{off, off + n - 1})
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Range", "bytes="+strings.Join(spec, ","))
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, r := range ranges {
		total += r[1] - r[0] + 1
	}
	if total > size || resp.StatusCode == 200 {
		return int64(len(body)), nil // overlapping into more than the file: sent whole
	}
	// Each part's bytes appear in order in the body, between the part headers.
	rest := body
	for _, r := range ranges {
		part := make([]byte, r[1]-r[0]+1)
		expected.ReadAt(part, r[0])
		header := "Content-Range: bytes " + strconv.FormatInt(r[0], 10) + "-" + strconv.FormatInt(r[1], 10) + "/"
		i := bytes.Index(rest, []byte(header))
		if i < 0 {
			return 0, fmt.Errorf("multipart: no part for %d-%d", r[0], r[1])
		}
		start := bytes.Index(rest[i:], []byte("\r\n\r\n")) + i + 4
		if !bytes.HasPrefix(rest[start:], part) {
			return 0, fmt.Errorf("multipart: the part %d-%d differs from the built file", r[0], r[1])
		}
		rest = rest[start+len(part):]
	}
	return int64(len(body)), nil
}

func compareAt(expected io.ReaderAt, got, want []byte, off int64) error {
	if _, err := expected.ReadAt(want, off); err != nil && err != io.EOF {
		return err
	}
	if !bytes.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				return fmt.Errorf("byte %d differs from the built file", off+int64(i))
			}
		}
	}
	return nil
}

// rss is this process's resident memory in bytes.
func rss(t *testing.T) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		testenv.Missing(t, "cannot read the resident memory: %v", err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kib << 10
		}
	}
	testenv.Missing(t, "no VmRSS in /proc/self/status")
	return 0
}
