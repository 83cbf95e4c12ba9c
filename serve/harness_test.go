package serve

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// testConfig is the file a test node is made of: its content becomes config.ign.
const testConfig = "config.ign"

// testPrepare makes a node of dir/config.ign, embedded as it is; a config starting with
// "broken" fails, as a real preparation fails on a bad file.
func testPrepare(calls *atomic.Int32) prepareFunc {
	return func(dir string) (*node.Node, []string, error) {
		calls.Add(1)
		p := filepath.Join(dir, testConfig)
		inputs := []string{p}
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, inputs, err
		}
		if bytes.HasPrefix(raw, []byte("broken")) {
			return nil, inputs, fmt.Errorf("%s: broken on purpose", p)
		}
		return testNode(raw), inputs, nil
	}
}

func testNode(config []byte) *node.Node {
	return &node.Node{Payload: initrd.Files{initrd.IgnitionPath: config}}
}

func customized(iso *isobuilder.LiveISO, payload initrd.Files) (*isobuilder.Image, error) {
	patch, err := iso.PayloadPatch(payload)
	if err != nil {
		return nil, err
	}
	return iso.Image(patch)
}

// syncBuffer is the server's log, read by the test while the server writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness is a Server over an ISO and a nodes directory, listening on loopback.
type harness struct {
	t     testing.TB
	iso   string
	nodes string
	srv   *Server
	http  *httptest.Server
	url   string
	calls atomic.Int32
	log   syncBuffer
}

// newHarness serves iso (a fixture copy when empty) with the nodes given as name → config.
// testSetup is what a test may change before the server starts.
type testSetup struct {
	Config
	prepare prepareFunc
}

func newHarness(t testing.TB, iso string, nodes map[string]string, configure func(*testSetup)) *harness {
	t.Helper()
	if iso == "" {
		iso = fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	}
	h := &harness{t: t, iso: iso, nodes: t.TempDir()}
	for name, config := range nodes {
		h.writeNode(name, config)
	}
	setup := testSetup{Config{ISO: iso, NodesDir: h.nodes, TempDir: t.TempDir(), Log: &h.log}, testPrepare(&h.calls)}
	if configure != nil {
		configure(&setup)
	}
	srv, err := newServer(setup.Config, setup.prepare)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	h.http = httptest.NewServer(srv)
	h.url = h.http.URL
	t.Cleanup(func() {
		h.http.Close()
		srv.Close()
	})
	return h
}

func (h *harness) writeNode(name, config string) {
	h.t.Helper()
	dir := filepath.Join(h.nodes, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, testConfig), []byte(config), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// path turns the plain path of a node's file (/a.iso, /a/boot.ipxe) into the path the server
// publishes it at: under the node's token unless the server is open. The index, /rootfs.img
// and the admin paths are no node's.
func (h *harness) path(plain string) string {
	secret := h.srv.publishedSecret()
	if secret == nil || plain == "/" || plain == "/"+isobuilder.PXERootfs || plain == HealthPath || plain == ReadyPath || plain == MetricsPath {
		return plain
	}
	_, node, _ := capability.SplitPath("/-" + plain)
	return "/" + capability.Token(secret.Key, node) + plain
}

// do sends a request for the plain path (see path) with headers given as "Name: value" and
// returns the response with its whole body.
func (h *harness) do(method, path string, headers ...string) (*http.Response, []byte) {
	h.t.Helper()
	return h.doRaw(method, h.path(path), headers...)
}

// doRaw sends a request for path as it is.
func (h *harness) doRaw(method, path string, headers ...string) (*http.Response, []byte) {
	h.t.Helper()
	resp := h.send(method, path, headers...)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return resp, body
}

// send sends a request for path as it is and returns the response, its body unread.
func (h *harness) send(method, path string, headers ...string) *http.Response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, hd := range headers {
		k, v, _ := strings.Cut(hd, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

func (h *harness) get(path string, headers ...string) (*http.Response, []byte) {
	h.t.Helper()
	return h.do(http.MethodGet, path, headers...)
}

// want is what `build` would write for a node with config: the ISO customized with it.
func (h *harness) want(config string) []byte {
	h.t.Helper()
	return h.built(func(iso *isobuilder.LiveISO) (*isobuilder.Image, error) {
		return customized(iso, initrd.Files{initrd.IgnitionPath: []byte(config)})
	})
}

// built is the bytes of the image that build makes of the harness's ISO.
func (h *harness) built(build func(*isobuilder.LiveISO) (*isobuilder.Image, error)) []byte {
	h.t.Helper()
	iso, err := isobuilder.Open(h.iso)
	if err != nil {
		h.t.Fatal(err)
	}
	defer iso.Close()
	img, err := build(iso)
	if err != nil {
		h.t.Fatal(err)
	}
	b, err := io.ReadAll(io.NewSectionReader(img, 0, img.Size()))
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// pxeBytes returns the ISO's IMAGES/PXEBOOT file called name.
func (h *harness) pxeBytes(name string) []byte {
	h.t.Helper()
	iso, err := isobuilder.Open(h.iso)
	if err != nil {
		h.t.Fatal(err)
	}
	defer iso.Close()
	f, err := iso.PXEFile(name)
	if err != nil {
		h.t.Fatal(err)
	}
	b, err := io.ReadAll(iso.PXEFileReader(f))
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}
