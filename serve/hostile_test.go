package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/progress"
)

// A token whose slash is percent-encoded (/TOKEN%2Fa.iso) is hidden in the access log too,
// text or JSON.
func TestEncodedSlashTokenNeverLogged(t *testing.T) {
	var jsonLog bytes.Buffer
	for _, logger := range []*slog.Logger{nil, slog.New(slog.NewJSONHandler(&jsonLog, nil))} {
		h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.Logger = logger })
		token := capability.Token(h.srv.publishedSecret().Key, "a")
		h.doRaw(http.MethodGet, "/"+token+"%2Fa.iso")
		h.doRaw(http.MethodGet, "/"+token+"%2fa%2Fboot.ipxe")
		log := h.log.String() + jsonLog.String()
		if strings.Contains(log, token) || strings.Contains(log, token[:20]) {
			t.Errorf("the log holds the token:\n%s", log)
		}
		if !strings.Contains(log, "/{token}/a.iso") {
			t.Errorf("the log does not name the node's file:\n%s", log)
		}
	}
}

// Clients without a token reading the public rootfs.img cannot take the places of the
// capability URLs: the two have places of their own.
func TestPublicFilesDoNotTakeCapabilitySlots(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.MaxConcurrent = 2 })
	// Two slow readers of /rootfs.img hold every public place.
	for range 2 {
		release, err := h.srv.takeSlot(publicClass)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
	}
	if resp, _ := h.get("/" + isobuilder.PXERootfs); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a third public reader: %d, want 503", resp.StatusCode)
	}
	if resp, _ := h.get("/a.iso"); resp.StatusCode != http.StatusOK {
		t.Errorf("a capability URL while the public places are taken: %d, want 200", resp.StatusCode)
	}
}

// serving runs s.Serve on a loopback listener until the test ends and returns its address.
func serving(t *testing.T, serve func(context.Context, net.Listener) error) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	return ln.Addr().String()
}

// A request whose headers exceed the bound is refused with 431, not read into memory.
func TestOversizedHeadersRefused(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	addr := serving(t, h.srv.Serve)
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	req.Header.Set("X-Filler", strings.Repeat("x", 64<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("64 KiB of headers: %d, want 431", resp.StatusCode)
	}
}

// Past MaxConnections, the connection that has waited longest for its request is closed, not
// the new one: clients that never finish their headers cannot keep the others out.
func TestConnectionsBounded(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.MaxConnections = 2 })
	addr := serving(t, h.srv.Serve)
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n")) // headers never finished
		held = append(held, c)
	}
	// The held connections are accepted before the next one, in the order they came.
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	extra.SetReadDeadline(time.Now().Add(time.Minute))
	fmt.Fprintf(extra, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(extra), nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a third connection past the bound of 2: %v, %v; want it answered", resp, err)
	}
	held[0].SetReadDeadline(time.Now().Add(time.Minute))
	if n, err := held[0].Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("the oldest held connection: read %d bytes, %v; want it closed", n, err)
	}
	// The other is still open: its read waits, until the header timeout closes it.
	held[1].SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := held[1].Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the newer held connection: %v; want it still open", err)
	}
}

// A broken replacement of the certificate or key is logged, once, while the last good pair
// stays in use.
func TestTLSBrokenRenewalLogged(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := fixtures.SelfSignedCert(t, dir)
	var warnings []error
	cfg, err := TLSConfig(certFile, keyFile, func(err error) { warnings = append(warnings, err) })
	if err != nil {
		t.Fatal(err)
	}
	good, err := cfg.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte("broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got, err := cfg.GetCertificate(nil); err != nil || !bytes.Equal(got.Certificate[0], good.Certificate[0]) {
			t.Fatalf("after a broken renewal: %v, want the last good certificate", err)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), keyFile) {
		t.Errorf("warnings %v, want one naming %s", warnings, keyFile)
	}
}

// The served ISO moved away: the open file keeps serving whole answers or the server says it
// cannot (5xx, not ready), never 200 with an empty or cut body.
func TestISOMovedAway(t *testing.T) {
	iso := filepath.Join(t.TempDir(), "live.iso")
	copyTestFile(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), iso)
	h := newHarness(t, iso, map[string]string{"a": configA}, nil)
	if resp, _ := h.get("/a.iso"); resp.StatusCode != http.StatusOK {
		t.Fatalf("before: %d", resp.StatusCode)
	}
	if err := os.Rename(iso, iso+".moved"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/a.iso", "/" + isobuilder.PXERootfs, "/a/initrd.img"} {
		resp, body := h.get(p)
		if resp.StatusCode == http.StatusOK && int64(len(body)) != resp.ContentLength {
			t.Errorf("GET %s after the move: 200 with %d of %d bytes", p, len(body), resp.ContentLength)
		}
		if resp.StatusCode == http.StatusOK && len(body) == 0 {
			t.Errorf("GET %s after the move: 200 with an empty body", p)
		}
		ready, _ := h.get(ReadyPath)
		if resp.StatusCode >= 500 && ready.StatusCode == http.StatusOK {
			t.Errorf("GET %s after the move: %d while %s says ready", p, resp.StatusCode, ReadyPath)
		}
	}
	// Put back, it is served again.
	if err := os.Rename(iso+".moved", iso); err != nil {
		t.Fatal(err)
	}
	if resp, body := h.get("/a.iso"); resp.StatusCode != http.StatusOK || !bytes.Equal(body, h.want(configA)) {
		t.Errorf("after the ISO was put back: %d, %d bytes", resp.StatusCode, len(body))
	}
	if ready, _ := h.get(ReadyPath); ready.StatusCode != http.StatusOK {
		t.Errorf("after the ISO was put back: %s %d", ReadyPath, ready.StatusCode)
	}
}

func copyTestFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A node whose file blocked its preparation is prepared again once the file is put right:
// the stuck preparation, past its time limit, does not hold the node's requests forever.
func TestStuckNodeRecoversOnceItsFileIsRestored(t *testing.T) {
	h := newHarness(t, "", nil, func(c *testSetup) { c.PrepareTimeout = 300 * time.Millisecond })
	dir := filepath.Join(h.nodes, "stuck")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, testConfig)
	fixtures.NamedPipe(t, fifo)
	aside := filepath.Join(t.TempDir(), "fifo")
	t.Cleanup(func() {
		// A writer that comes and goes ends the stuck preparation's read.
		if w, err := os.OpenFile(aside, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	if resp, _ := h.get("/stuck.iso"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("while its file blocks: %d, want 503", resp.StatusCode)
	}
	if err := os.Rename(fifo, aside); err != nil {
		t.Fatal(err)
	}
	h.writeNode("stuck", configA)
	if resp, body := h.get("/stuck.iso"); resp.StatusCode != http.StatusOK || !bytes.Equal(body, h.want(configA)) {
		t.Errorf("once its file is restored: %d, want the node's ISO", resp.StatusCode)
	}
}

// Prepared nodes live in a cache bounded by bytes: served round-robin, more nodes than fit
// keep the cache within its budget, the least recently used going first, and the metrics
// count hits, misses and bytes.
func TestNodeCacheBoundedByBytes(t *testing.T) {
	nodes := map[string]string{}
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("n%02d", i))
		nodes[names[i]] = configA + strings.Repeat(" ", 4096)
	}
	var budget int64
	h := newHarness(t, "", nodes, func(c *testSetup) {
		budget = 4 * (nodeStateOverhead + 2*int64(len(configA)+4096))
		c.NodeCacheBytes = budget
	})
	for range 2 {
		for _, name := range names {
			if resp, _ := h.get("/" + name + "/boot.ipxe"); resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", name, resp.StatusCode)
			}
		}
	}
	_, metrics := h.get(MetricsPath)
	bytes := metricValue(t, string(metrics), "sno_iso_node_cache_bytes")
	if bytes <= 0 || bytes > float64(budget) {
		t.Errorf("the cache holds %v bytes, want within its budget of %d", bytes, budget)
	}
	if misses := metricValue(t, string(metrics), "sno_iso_node_cache_misses_total"); misses != 24 {
		t.Errorf("%v misses, want 24: round-robin over more nodes than fit misses every time", misses)
	}
	// The node just used is kept: asking again is a hit.
	h.get("/n00/boot.ipxe")
	h.get("/n00/boot.ipxe")
	_, metrics = h.get(MetricsPath)
	if hits := metricValue(t, string(metrics), "sno_iso_node_cache_hits_total"); hits != 1 {
		t.Errorf("%v hits, want 1", hits)
	}
}

// sendRaw sends a GET of target as written, unparsed by any client, and reads the answer.
func sendRaw(t *testing.T, base, target string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nRange: bytes=0-10\r\nConnection: close\r\n\r\n", target, u.Host)
	io.Copy(io.Discard, c)
}

// No form of a capability or report URL puts its token in the access log, text or JSON:
// doubled or dotted slashes, an escaped slash, a token alone or cut short, in the query. A
// node's name as long as a token still shows.
func TestTokensNeverLoggedInAnyForm(t *testing.T) {
	const long = "worker-node-0000000000001"
	var jsonLog bytes.Buffer
	for _, logger := range []*slog.Logger{nil, slog.New(slog.NewJSONHandler(&jsonLog, nil))} {
		h := newHarness(t, "", map[string]string{"a": configA, long: configB}, func(c *testSetup) { c.Logger = logger })
		key := h.srv.publishedSecret().Key
		token, report, longToken := capability.Token(key, "a"), progress.Token(key, "a"), capability.Token(key, long)
		h.get("/") // lists the nodes
		forms := []string{
			"//" + token + "/a.iso", "/x/../" + token + "/a.iso", "/./" + token + "/a.iso", "/%2F" + token + "/a.iso",
			"/" + token, "//" + report + "/a/report", "/" + token[:12] + "/a.iso", "/a.iso?t=" + token,
			"/x/" + token + "%2Fa.iso", "/" + token + "a.iso", "/" + longToken + "/" + long + "-minimal.iso",
		}
		for _, form := range forms {
			sendRaw(t, h.url, form)
		}
		log := h.log.String() + jsonLog.String()
		for _, secret := range []string{token, report, longToken} {
			if strings.Contains(log, secret[:minTokenRun]) || strings.Contains(log, secret[len(secret)-minTokenRun:]) {
				t.Errorf("the log holds (part of) a token:\n%s", log)
			}
		}
		if n := strings.Count(log, "{token}") + strings.Count(log, "?{redacted}"); n < len(forms) {
			t.Errorf("%d {token} in the log for %d requests:\n%s", n, len(forms), log)
		}
		if !strings.Contains(log, "/{token}/"+long+"-minimal.iso") {
			t.Errorf("the log does not name the node %s:\n%s", long, log)
		}
	}
}
