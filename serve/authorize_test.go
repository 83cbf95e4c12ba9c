package serve

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/umask"
)

// testSecretFile is a committed secret with the key bytes 0..31, so tokens are known answers.
const testSecretFile = "../capability/testdata/secret"

// The secret is created once in the nodes directory, 0600 whatever the umask, and every
// server over the directory (a restart, a replica) publishes the same URLs; another secret
// gives other tokens.
func TestSecretSharedByRestartsAndReplicas(t *testing.T) {
	umask.Permissive(t)
	h := newHarness(t, "", map[string]string{"a": configA, "b": configB}, nil)
	info, err := os.Stat(filepath.Join(h.nodes, capability.SecretFileName))
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("the secret file has mode %v, want 0600", mode)
	}
	if !strings.Contains(h.log.String(), "created the secret") {
		t.Errorf("the log does not say the secret was created:\n%s", h.log.String())
	}
	replica, err := newServer(Config{ISO: h.iso, NodesDir: h.nodes}, h.srv.prepare)
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Close()
	first, second := h.srv.publishedSecret(), replica.publishedSecret()
	if capability.Token(first.Key, "a") != capability.Token(second.Key, "a") {
		t.Error("two servers over one nodes directory give node a different tokens")
	}
	if capability.Token(first.Key, "a") == capability.Token(first.Key, "b") {
		t.Error("nodes a and b have the same token")
	}
	other, err := capability.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if capability.Token(first.Key, "a") == capability.Token(other.Key, "a") {
		t.Error("two secrets give node a the same token")
	}
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
		t.Errorf("GET a's capability URL: %d", resp.StatusCode)
	}
}

// Everything but the node's own token gets the same 404, whose body holds no byte of the
// media, for a node that exists as for one that does not.
func TestCapabilityRefused(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA, "b": configB}, nil)
	secret := h.srv.publishedSecret()
	tokenA, tokenB := capability.Token(secret.Key, "a"), capability.Token(secret.Key, "b")
	other, _ := capability.NewSecret()
	var refusals []string
	for _, p := range []string{"/a.iso", "/a-minimal.iso", "/a/initrd.img", "/a/boot.ipxe", "/a/vmlinuz"} {
		refusals = append(refusals,
			p,                             // no token
			"/"+tokenB+p,                  // another node's
			"/"+tokenA[:21]+p,             // truncated
			"/"+tokenA+"A"+p,              // too long
			"/"+strings.ToLower(tokenA)+p, // altered
			"/"+capability.Token(other.Key, "a")+p, // another secret's
			"//"+p,
		)
	}
	var body404 []byte
	// A node that does not exist is refused the same way.
	for _, p := range append(refusals, "/"+capability.Token(other.Key, "nope")+"/nope.iso", "/nope.iso") {
		req, _ := http.NewRequest(http.MethodGet, h.url, nil)
		req.URL.Opaque = p
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, 4096)
		n, _ := resp.Body.Read(body)
		resp.Body.Close()
		body = body[:n]
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Range") != "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("GET %s: %d %s, want a plain 404", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if body404 == nil {
			body404 = body
		} else if !bytes.Equal(body, body404) {
			t.Errorf("GET %s: %q differs from the other refusals' %q", p, body, body404)
		}
	}
	if resp, _ := h.doRaw(http.MethodGet, "/"+tokenA+"/a.iso"); resp.StatusCode != 200 {
		t.Errorf("a's own token: %d", resp.StatusCode)
	}
}

// The access log names the node, never its token, whether the token was right or wrong.
func TestTokensNeverLogged(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	secret := h.srv.publishedSecret()
	token := capability.Token(secret.Key, "a")
	h.get("/a.iso", "Range: bytes=0-99")
	h.get("/a/boot.ipxe")
	h.doRaw(http.MethodGet, "/"+token[:20]+"xy/a.iso")
	h.doRaw(http.MethodGet, "/"+token+"/nope.iso")
	log := h.log.String()
	if strings.Contains(log, token) || strings.Contains(log, token[:20]) {
		t.Errorf("the log holds a token:\n%s", log)
	}
	for _, want := range []string{`"GET /{token}/a.iso HTTP/1.1" 206`, `"GET /{token}/a/boot.ipxe HTTP/1.1" 200`, `"GET /{token}/a.iso HTTP/1.1" 404`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	// boot.ipxe carries the node's token to the node, not to the log.
	if _, body := h.get("/a/boot.ipxe"); !strings.Contains(string(body), token) {
		t.Errorf("boot.ipxe does not use the capability URLs: %q", body)
	}
}

// --open serves plain URLs, writes no secret and shows the URLs to everyone.
func TestOpen(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.Open = true })
	if resp, body := h.doRaw(http.MethodGet, "/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
		t.Errorf("GET /a.iso on an open server: %d", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(h.nodes, capability.SecretFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an open server wrote a secret: %v", err)
	}
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://192.0.2.1/", nil))
	if !strings.Contains(rec.Body.String(), `href="http://192.0.2.1/a.iso"`) {
		t.Errorf("an open server's index hides the URLs:\n%s", rec.Body.String())
	}
}

// The index lists every node and its state to all, and the URLs only to this machine.
func TestIndexShowsURLsToLoopbackOnly(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.BaseURL = "http://192.0.2.1:8080" })
	token := capability.Token(h.srv.publishedSecret().Key, "a")
	h.get("/a.iso")
	h.waitFetched("/a.iso")
	code, page := h.remoteIndex()
	// Who fetched a.iso is shown to all, by the path the token stands for. The fixture's
	// initramfs is a placeholder: a cannot be network-booted, and the index says so.
	if code != 200 || strings.Contains(page, token) || !strings.Contains(page, "<td>a</td>") || !strings.Contains(page, "not ready: initrd.img: ") ||
		strings.Contains(page, h.iso) || strings.Contains(page, h.nodes) ||
		!strings.Contains(page, "sno-iso serve urls") || !strings.Contains(page, "a.iso by 127.0.0.1") {
		t.Errorf("the index for a remote client:\n%s", page)
	}
	if _, body := h.get("/"); !strings.Contains(string(body), "http://192.0.2.1:8080/"+token+"/a.iso") {
		t.Errorf("the index for a loopback client lacks a's URL:\n%s", body)
	}
}

// A rotated secret takes effect without a restart; the old URLs work during the grace
// period the file names, and not after it.
func TestRotation(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	path := filepath.Join(h.nodes, capability.SecretFileName)
	oldPath := h.path("/a.iso")
	if err := capability.RotateSecretFile(path, time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	newPath := h.path("/a.iso")
	if newPath == oldPath {
		t.Fatal("the rotation kept the token")
	}
	for _, p := range []string{oldPath, newPath} {
		if resp, _ := h.doRaw(http.MethodGet, p); resp.StatusCode != 200 {
			t.Errorf("during the grace period: %d", resp.StatusCode)
		}
	}
	// Another rotation, with the grace period over for the key it replaces.
	rotated, _ := capability.ReadSecretFile(path)
	expired, err := rotated.Rotated(time.Now().Add(-2*time.Hour), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	writeTestSecret(t, path, expired)
	if resp, _ := h.doRaw(http.MethodGet, newPath); resp.StatusCode != 404 {
		t.Errorf("after the grace period: %d, want 404", resp.StatusCode)
	}
	if resp, _ := h.get("/a.iso"); resp.StatusCode != 200 {
		t.Errorf("the new token: %d", resp.StatusCode)
	}
}

// A file replaced by one without the old key keeps the old URLs for the server's grace
// period; without one they end at once.
func TestSecretReplacedByHand(t *testing.T) {
	for _, grace := range []time.Duration{0, time.Hour} {
		h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.RotationGrace = grace })
		oldPath := h.path("/a.iso")
		fresh, _ := capability.NewSecret()
		writeTestSecret(t, filepath.Join(h.nodes, capability.SecretFileName), fresh)
		want := http.StatusNotFound
		if grace > 0 {
			want = http.StatusOK
		}
		if resp, _ := h.doRaw(http.MethodGet, oldPath); resp.StatusCode != want {
			t.Errorf("grace %v: the old URL gets %d, want %d", grace, resp.StatusCode, want)
		}
		if resp, _ := h.doRaw(http.MethodGet, "/"+capability.Token(fresh.Key, "a")+"/a.iso"); resp.StatusCode != 200 {
			t.Errorf("grace %v: the new URL gets %d", grace, resp.StatusCode)
		}
	}
}

// A bad replacement leaves the last good secret in force, and says why in the log.
func TestSecretBrokenWhileServing(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	p := h.path("/a.iso")
	os.WriteFile(filepath.Join(h.nodes, capability.SecretFileName+".new"), []byte("garbage"), 0o600)
	os.Rename(filepath.Join(h.nodes, capability.SecretFileName+".new"), filepath.Join(h.nodes, capability.SecretFileName))
	if resp, _ := h.doRaw(http.MethodGet, p); resp.StatusCode != 200 {
		t.Errorf("after the secret file was broken: %d", resp.StatusCode)
	}
	if !strings.Contains(h.log.String(), "still using the secret read before") {
		t.Errorf("the log does not say the secret file is broken:\n%s", h.log.String())
	}
}

// A given secret file (a mounted Kubernetes Secret) is only read: a missing one is an
// error, never created.
func TestSecretFileIsOnlyRead(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "secret")
	_, err := New(Config{ISO: fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), NodesDir: t.TempDir(), SecretFile: missing})
	if !errors.Is(err, capability.ErrNoSecret) {
		t.Errorf("New with a missing secret file: %v, want capability.ErrNoSecret", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the given secret file was created: %v", err)
	}
	h := newHarness(t, "", map[string]string{"sno": configA}, func(c *testSetup) { c.SecretFile = testSecretFile })
	if resp, _ := h.doRaw(http.MethodGet, "/9O8eFBoGwGZ0VHBqvfRSTA/sno.iso"); resp.StatusCode != 200 {
		t.Errorf("the URL of the given secret: %d", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(h.nodes, capability.SecretFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a secret was written to the nodes directory beside the given one: %v", err)
	}
}

func writeTestSecret(t *testing.T, path string, s *capability.Secret) {
	t.Helper()
	text, _ := s.MarshalText()
	if err := os.WriteFile(path+".new", text, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}
