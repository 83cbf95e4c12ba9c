//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// benchDownload measures `sno-iso download --url --sha256` of a file of size bytes from a
// loopback HTTP server against `curl -o` of the same URL, alternating, and prints rows of
// the table main prints. sno-iso hashes while streaming and fsyncs before its rename; curl
// does neither, so curl followed by sync is measured too.
func benchDownload(sno, tmp string, size int64, rounds int) {
	if _, err := exec.LookPath("curl"); err != nil {
		fatalf("the download benchmark compares with curl: %v (scripts/install-deps installs it)", err)
	}
	file := filepath.Join(tmp, "artifact.iso")
	digest := writeRandomFile(file, size)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	defer ln.Close()
	go http.Serve(ln, http.FileServer(http.Dir(tmp)))
	url := "http://" + ln.Addr().String() + "/artifact.iso"

	cache := filepath.Join(tmp, "cache")
	out := filepath.Join(tmp, "curl.iso")
	args := []string{"download", "--url", url, "--sha256", digest, "--cache-dir", cache}
	var curl, curlSync, snoRuns []run
	for range rounds {
		os.Remove(out)
		curl = append(curl, execute("curl", "-sSf", "-o", out, url))
		os.Remove(out)
		curlSync = append(curlSync, execute("sh", "-c", `curl -sSf -o "$1" "$2" && sync "$1"`, "sh", out, url))
		os.Remove(out)
		if err := os.RemoveAll(cache); err != nil {
			fatal(err)
		}
		snoRuns = append(snoRuns, execute(sno, args...))
	}
	hit := execute(sno, args...)
	checkDownloaded(filepath.Join(cache, digest, "artifact.iso"), digest)

	c, cs, s := median(curl), median(curlSync), median(snoRuns)
	gbps := func(r run) float64 { return float64(size) / r.wall.Seconds() / 1e9 }
	fmt.Printf("| `curl -o` of a %d MiB file over loopback HTTP (%.2f GB/s) | %v | 1.00 | %d MiB |\n",
		size>>20, gbps(c), c.wall.Round(time.Millisecond), c.maxRSS>>10)
	fmt.Printf("| `curl -o` + `sync` | %v | %.2f | %d MiB |\n", cs.wall.Round(time.Millisecond), ratio(cs, c), cs.maxRSS>>10)
	fmt.Printf("| `sno-iso download --url --sha256` (sha256 while streaming, fsync, rename; "+
		"%.2f GB/s) | %v | %.2f vs curl, %.2f vs curl + sync | %d MiB |\n",
		gbps(s), s.wall.Round(time.Millisecond), ratio(s, c), ratio(s, cs), s.maxRSS>>10)
	fmt.Printf("| `sno-iso download`, the same file again: a cache hit | %v | | %d MiB |\n", hit.wall.Round(time.Millisecond), hit.maxRSS>>10)
}

// writeRandomFile writes size pseudo-random bytes (incompressible, like an ISO's squashfs)
// to path and returns their sha256.
func writeRandomFile(path string, size int64) string {
	f, err := os.Create(path)
	if err != nil {
		fatal(err)
	}
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.NewChaCha8([32]byte{1}), size); err != nil {
		fatal(err)
	}
	if err := f.Close(); err != nil {
		fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkDownloaded makes sure that what was timed produced the right file.
func checkDownloaded(path, digest string) {
	f, err := os.Open(path)
	if err != nil {
		fatalf("sno-iso download left no file: %v", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		fatal(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, digest) {
		fatalf("%s: sha256 %s, want %s", path, got, digest)
	}
}
