package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serveMetric is the value of series in the /metrics of the serve at url; -1 when absent.
func serveMetric(t *testing.T, url, series string) float64 {
	t.Helper()
	text, ok := metricText(t, url, series)
	if !ok {
		return -1
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// metricText is the value of series in the /metrics of the serve at url, as written there;
// false when absent.
func metricText(t *testing.T, url, series string) (string, bool) {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return "", false
	}
	return string(m[1]), true
}

// waitCopied waits until the serve at s reports its ISO served from a complete local copy
// (and its log says so count times), asking /readyz as a kubelet does meanwhile: that is how a
// replica serving its copy learns that the object changed.
func waitCopied(t *testing.T, s *servedNode, count int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if strings.Count(s.output(), "from the local copy") >= count && serveMetric(t, s.url, "sno_iso_origin_copy_complete") == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ISO was not served from a local copy (%d times):\n%s", count, s.output())
		}
		rawGet(t, s.url+"/readyz")
	}
}

// TestServeCopiesS3ISO: `serve --iso s3://...` against a real S3 store (SeaweedFS over TLS)
// copies the ISO to --iso-copy-dir once and serves every download from the copy, with no
// further bytes from the store; with the store stopped it serves on and stays ready; an
// object replaced in the bucket is noticed at a readiness probe, copied and served.
func TestServeCopiesS3ISO(t *testing.T) {
	st, v1, v2, replace := s3TwoVersions(t, "isos", "rhcos/rhcos-live.iso")
	st.Setenv(t, st.ReadOnly)
	nodes := t.TempDir()
	ign, cfg := serveNodeDir(t, nodes, "sno", serveSnoYAML)
	built := func(iso string) []byte {
		out := filepath.Join(t.TempDir(), "built.iso")
		mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", out)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want1, want2 := built(v1), built(v2)

	copyDir := t.TempDir()
	s := startServe(t, "--iso", "s3://isos/rhcos/rhcos-live.iso", "--nodes", nodes, "--iso-copy-dir", copyDir,
		"--s3-endpoint", st.Endpoint, "--s3-path-style", "--ca-file", st.CAFile)
	waitCopied(t, s, 1)
	if got := serveMetric(t, s.url, "sno_iso_origin_copy_bytes"); got != float64(fileSize(t, v1)) {
		t.Errorf("sno_iso_origin_copy_bytes %v, want %d", got, fileSize(t, v1))
	}
	if entries, err := os.ReadDir(copyDir); err != nil || len(entries) != 0 {
		t.Errorf("the copy has a name in %s: %v %v", copyDir, entries, err)
	}
	iso := s.urls(t, nodes, "sno")["iso"]
	storeBytes := serveMetric(t, s.url, "sno_iso_origin_bytes_total")
	for range 3 {
		if resp, body := s.get(t, iso); resp.StatusCode != 200 || !bytes.Equal(body, want1) {
			t.Errorf("GET the node's ISO from the copy: %d, what build writes: %v", resp.StatusCode, bytes.Equal(body, want1))
		}
	}
	if got := serveMetric(t, s.url, "sno_iso_origin_bytes_total"); got != storeBytes {
		t.Errorf("sno_iso_origin_bytes_total grew from %v to %v over downloads served from the copy", storeBytes, got)
	}

	// The store stopped: the copy serves on, ready.
	st.Stop()
	if resp, body := rawGet(t, s.url+"/readyz"); resp.StatusCode != 200 {
		t.Errorf("/readyz with the store stopped and the copy complete: %d %s", resp.StatusCode, body)
	}
	if resp, body := s.get(t, iso); resp.StatusCode != 200 || !bytes.Equal(body, want1) {
		t.Errorf("GET the node's ISO with the store stopped: %d", resp.StatusCode)
	}
	st.Restart(t)

	// The object replaced: a readiness probe finds out, and the new version is copied.
	if err := replace(); err != nil {
		t.Fatal(err)
	}
	waitCopied(t, s, 2)
	storeBytes = serveMetric(t, s.url, "sno_iso_origin_bytes_total")
	if resp, body := s.get(t, iso); resp.StatusCode != 200 || !bytes.Equal(body, want2) {
		t.Errorf("GET the node's ISO after the object was replaced: %d, the new version's build: %v", resp.StatusCode, bytes.Equal(body, want2))
	}
	if got := serveMetric(t, s.url, "sno_iso_origin_bytes_total"); got != storeBytes {
		t.Errorf("sno_iso_origin_bytes_total grew from %v to %v over a download of the new version's copy", storeBytes, got)
	}
	if out := s.output(); strings.Contains(out, st.ReadOnly.SecretAccessKey) || !strings.Contains(out, "changed at the origin") {
		t.Errorf("the log shows the secret key, or does not say the object changed:\n%s", out)
	}
	s.stop(t)
}

// --iso-copy-dir names a directory, or none; a mistake is refused at start, before any
// request to the origin.
func TestServeISOCopyDirUsage(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		dir   string
		wants []string
	}{
		{"", []string{"--iso-copy-dir is empty"}},
		{notDir, []string{notDir, "is not a directory", "none"}},
		{filepath.Join(t.TempDir(), "missing"), []string{"missing is not a directory", "create it"}},
	} {
		r := sno(t, nil, "serve", "--iso", "http://127.0.0.1:1/rhcos.iso", "--nodes", t.TempDir(), "--listen", "127.0.0.1:0",
			"--iso-copy-dir", tt.dir)
		if r.code != 2 {
			t.Errorf("--iso-copy-dir %q: exit %d, want 2: %s", tt.dir, r.code, r.stderr)
		}
		wantFailure(t, r, tt.wants...)
	}
}
