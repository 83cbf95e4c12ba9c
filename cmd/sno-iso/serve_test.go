package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/nodedir"
)

// servedNode is a running `sno-iso serve` and what it printed.
type servedNode struct {
	cmd *exec.Cmd
	url string
	mu  sync.Mutex
	log strings.Builder
}

// startServe runs the binary on loopback with a port of its choosing and waits until it
// says where it serves.
func startServe(t *testing.T, args ...string) *servedNode {
	t.Helper()
	return startServeAt(t, "127.0.0.1:0", args...)
}

// startServeAt is startServe listening on listen; the URL is what serve prints (its
// --base-url when given).
func startServeAt(t *testing.T, listen string, args ...string) *servedNode {
	t.Helper()
	s := &servedNode{cmd: exec.Command(snoISO(t), append([]string{"serve", "--listen", listen}, args...)...)}
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := regexp.MustCompile(`at (https?://\S+)/ `).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			t.Fatalf("sno-iso serve exited: %s", s.output())
		}
		s.url = u
	case <-time.After(30 * time.Second):
		t.Fatalf("sno-iso serve did not start: %s", s.output())
	}
	return s
}

func (s *servedNode) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// urls runs `serve urls` for node of the nodes directory and returns its URLs by kind.
func (s *servedNode) urls(t *testing.T, nodes, node string, extra ...string) map[string]string {
	t.Helper()
	out := mustSno(t, nil, append([]string{"serve", "urls", "--nodes", nodes, "--base-url", s.url, "--node", node}, extra...)...)
	urls := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != node {
			t.Fatalf("serve urls printed %q", line)
		}
		urls[f[1]] = f[2]
	}
	return urls
}

// get fetches url with the client a BMC is: no certificate verification.
func (s *servedNode) get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// sha fetches path and returns the SHA-256 of the body, failing unless the answer is 200.
func (s *servedNode) sha(t *testing.T, path string) string {
	t.Helper()
	resp, err := http.Get(s.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
	}
	h := sha256.New()
	if _, err := io.Copy(h, resp.Body); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// stop sends SIGTERM and expects a clean exit.
func (s *servedNode) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("sno-iso serve after SIGTERM: %v\n%s", err, s.output())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("sno-iso serve did not stop on SIGTERM")
	}
}

// serveNodeDir writes a node directory like the one openshift-install and the user make.
func serveNodeDir(t *testing.T, nodes, name, snoYAML string) (ign, cfg string) {
	t.Helper()
	dir := filepath.Join(nodes, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ign = bipConfig(t, dir, 150000)
	cfg = writeFile(t, filepath.Join(dir, nodedir.ConfigFile), snoYAML)
	return ign, cfg
}

const serveSnoYAML = `coreOSInstallation:
  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3
liveKargs:
  append: [ip=192.0.2.10::192.0.2.1:255.255.255.0:sno:eno1:none]
`

// The bytes served are those `build`, `build --minimal` and `pxe build` write for the same
// node, and SIGTERM stops the server cleanly.
func TestServeMatchesBuild(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	nodes := t.TempDir()
	ign, cfg := serveNodeDir(t, nodes, "sno", serveSnoYAML)
	s := startServe(t, "--iso", iso, "--nodes", nodes)
	urls := s.urls(t, nodes, "sno")
	out := t.TempDir()

	full := filepath.Join(out, "full.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", full)
	if got, want := s.sha(t, strings.TrimPrefix(urls["iso"], s.url)), fileSHA(t, full); got != want {
		t.Errorf("%s has SHA-256 %s, build wrote %s", urls["iso"], got, want)
	}
	minimal := filepath.Join(out, "minimal.iso")
	mustSno(t, nil, "build", "--minimal", "--rootfs-url", urls["pxe-dir"]+"/rootfs.img", "--iso", iso, "--ignition", ign, "--config", cfg,
		"-o", minimal)
	if got, want := s.sha(t, strings.TrimPrefix(urls["minimal-iso"], s.url)), fileSHA(t, minimal); got != want {
		t.Errorf("%s has SHA-256 %s, build --minimal wrote %s", urls["minimal-iso"], got, want)
	}
	if resp, _ := s.get(t, s.url+"/sno.iso"); resp.StatusCode != 404 {
		t.Errorf("GET /sno.iso without the token: %d, want 404", resp.StatusCode)
	}
	token := strings.Split(strings.TrimPrefix(urls["iso"], s.url+"/"), "/")[0]
	if !strings.Contains(s.output(), `"GET /{token}/sno.iso HTTP/1.1" 200`) || strings.Contains(s.output(), token) {
		t.Errorf("the access log has no line for sno.iso, or holds its token %s:\n%s", token, s.output())
	}
	info, err := os.Stat(filepath.Join(nodes, capability.SecretFileName))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the secret file: %v, %v; want mode 0600", info, err)
	}
	s.stop(t)
}

// A node whose config does not fit the Ignition area is served, with --grow-embed-area, as
// build --grow-embed-area writes it, full and minimal.
func TestServeGrowEmbedAreaMatchesBuild(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	nodes := t.TempDir()
	dir := filepath.Join(nodes, "big")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ign := bipConfig(t, dir, 1000000)
	cfg := writeFile(t, filepath.Join(dir, nodedir.ConfigFile), serveSnoYAML)
	s := startServe(t, "--iso", iso, "--nodes", nodes, "--grow-embed-area")
	urls := s.urls(t, nodes, "big")
	out := t.TempDir()

	full := filepath.Join(out, "full.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "--grow-embed-area", "-o", full)
	if got, want := s.sha(t, strings.TrimPrefix(urls["iso"], s.url)), fileSHA(t, full); got != want {
		t.Errorf("%s has SHA-256 %s, build --grow-embed-area wrote %s", urls["iso"], got, want)
	}
	minimal := filepath.Join(out, "minimal.iso")
	mustSno(t, nil, "build", "--minimal", "--rootfs-url", urls["pxe-dir"]+"/rootfs.img", "--iso", iso, "--ignition", ign, "--config", cfg,
		"--grow-embed-area", "-o", minimal)
	if got, want := s.sha(t, strings.TrimPrefix(urls["minimal-iso"], s.url)), fileSHA(t, minimal); got != want {
		t.Errorf("%s has SHA-256 %s, build --minimal --grow-embed-area wrote %s", urls["minimal-iso"], got, want)
	}
	path := strings.TrimPrefix(urls["iso"], s.url)
	s.stop(t)

	// Without the flag the node is refused, as build refuses it.
	s = startServe(t, "--iso", iso, "--nodes", nodes)
	resp, body := s.get(t, s.url+path)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "too large") {
		t.Errorf("%s without --grow-embed-area: %s %s", path, resp.Status, body)
	}
	s.stop(t)
}

func TestServeMatchesPXEBuild(t *testing.T) {
	iso := withInitramfs(t, stockLiveInitramfs(t))
	nodes := t.TempDir()
	ign, cfg := serveNodeDir(t, nodes, "sno", serveSnoYAML)
	// A broken node next to it: a clear error for it, the others unaffected.
	os.Mkdir(filepath.Join(nodes, "broken"), 0o755)
	writeFile(t, filepath.Join(nodes, "broken", nodedir.IgnitionFile), `{"ignition":{"version":"3.2.0"`)
	s := startServe(t, "--iso", iso, "--nodes", nodes)
	pxeDir := s.urls(t, nodes, "sno")["pxe-dir"]

	dir := filepath.Join(t.TempDir(), "pxe")
	mustSno(t, nil, "pxe", "build", "--iso", iso, "--ignition", ign, "--config", cfg, "--base-url", pxeDir, "-o", dir)
	for _, name := range []string{"vmlinuz", "initrd.img", "rootfs.img", "boot.ipxe"} {
		if got, want := s.sha(t, strings.TrimPrefix(pxeDir, s.url)+"/"+name), fileSHA(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s/%s has SHA-256 %s, pxe build wrote %s", pxeDir, name, got, want)
		}
	}
	if got, want := s.sha(t, "/rootfs.img"), fileSHA(t, filepath.Join(dir, "rootfs.img")); got != want {
		t.Errorf("/rootfs.img has SHA-256 %s, pxe build wrote %s", got, want)
	}
	// The client learns the kind of problem; the server's log names the file.
	resp, body := s.get(t, s.urls(t, nodes, "broken")["iso"])
	brokenFile := filepath.Join(nodes, "broken", nodedir.IgnitionFile)
	if resp.StatusCode != 500 || strings.Contains(string(body), brokenFile) {
		t.Errorf("GET /broken.iso: %d %q, want 500 without the server's paths", resp.StatusCode, body)
	}
	s.stop(t)
	if !strings.Contains(s.output(), brokenFile) {
		t.Errorf("the log does not name the broken file:\n%s", s.output())
	}
}

func TestServeUsage(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	config := filepath.Join(t.TempDir(), "config.ign")
	if err := os.WriteFile(config, []byte(`{"ignition":{"version":"3.2.0"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	customized := filepath.Join(t.TempDir(), "customized.iso")
	mustSno(t, nil, "ignition", "embed", "-i", config, "-o", customized, iso)
	for _, tt := range []struct {
		args  []string
		code  int
		wants []string
	}{
		{[]string{"serve", "--iso", iso}, 2, []string{"needs --nodes"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--max-concurrent", "0"}, 2, []string{"--max-concurrent"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--max-connections", "0"}, 2, []string{"--max-connections"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--node-cache-size", "0"}, 2, []string{"--node-cache-size"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--node-cache-size", "lots"}, 2, []string{"--node-cache-size"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--base-url", "ftp://x"}, 2, []string{"http://"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--prepare-timeout", "0s"}, 2, []string{"--prepare-timeout must be positive"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--write-timeout", "-1s"}, 2, []string{"--write-timeout must be positive"}},
		// Served media are customizations of the pristine ISO, as build's are.
		{[]string{"serve", "--iso", customized, "--nodes", t.TempDir(), "--listen", "127.0.0.1:0"}, 1,
			[]string{customized, "embedded customizations", "sno-iso reset", "pristine ISO"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--listen", "8080"}, 2, []string{"HOST:PORT"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--listen", "127.0.0.1:0", "--tls-cert", iso}, 2, []string{"--tls-key"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--listen", "127.0.0.1:0", "--secret-file",
			filepath.Join(t.TempDir(), "none")}, 1, []string{"none", "rotate-secret --secret-file"}},
		{[]string{"serve", "urls", "--nodes", t.TempDir()}, 1, []string{capability.SecretFileName, "start sno-iso serve"}},
		{[]string{"serve", "rotate-secret"}, 2, []string{"--nodes or --secret-file"}},
		{[]string{"serve", "--iso", iso, "--nodes", filepath.Join(t.TempDir(), "none"), "--listen", "127.0.0.1:0"}, 1, []string{"none"}},
		{[]string{"serve", "--iso", iso, "--nodes", iso, "--listen", "127.0.0.1:0"}, 1, []string{"not a directory"}},
		{[]string{"serve", "--iso", fixtures.File(t, "synthetic.iso"), "--nodes", t.TempDir(), "--listen", "127.0.0.1:0"}, 1,
			[]string{"synthetic.iso"}},
	} {
		r := sno(t, nil, tt.args...)
		if r.code != tt.code {
			t.Errorf("%q: exit %d, want %d: %s", tt.args, r.code, tt.code, r.stderr)
		}
		wantFailure(t, r, tt.wants...)
	}
}

// Over HTTPS with a self-signed certificate, a client that does not verify it (as a BMC)
// gets the node's ISO; the minimal ISO fetches its rootfs over https too. A rotated secret
// takes effect without a restart, and the old URLs end with the grace period.
func TestServeTLSAndRotation(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	nodes := t.TempDir()
	ign, cfg := serveNodeDir(t, nodes, "sno", serveSnoYAML)
	cert, key := fixtures.SelfSignedCert(t, t.TempDir())
	s := startServe(t, "--iso", iso, "--nodes", nodes, "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(s.url, "https://127.0.0.1:") {
		t.Fatalf("serve with --tls-cert serves at %s", s.url)
	}
	old := s.urls(t, nodes, "sno")
	full := filepath.Join(t.TempDir(), "full.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", full)
	resp, body := s.get(t, old["iso"])
	if sum := sha256.Sum256(body); resp.StatusCode != 200 || hex.EncodeToString(sum[:]) != fileSHA(t, full) {
		t.Errorf("GET %s over TLS: %d, not what build wrote", old["iso"], resp.StatusCode)
	}
	// The node's own rootfs URL, under its capability path.
	if resp, body := s.get(t, old["minimal-iso"]); resp.StatusCode != 200 ||
		!bytes.Contains(body, []byte("coreos.live.rootfs_url="+old["pxe-dir"]+"/rootfs.img")) ||
		bytes.Contains(body, []byte(s.url+"/rootfs.img")) {
		t.Errorf("GET %s: %d, its rootfs URL is not %s/rootfs.img", old["minimal-iso"], resp.StatusCode, old["pxe-dir"])
	}

	if r := sno(t, nil, "serve", "rotate-secret", "--nodes", nodes, "--grace", "0s"); r.code != 0 ||
		!strings.Contains(string(r.stderr), "the old URLs work until") {
		t.Errorf("rotate-secret said %q", r.stderr)
	}
	fresh := s.urls(t, nodes, "sno")
	if fresh["iso"] == old["iso"] {
		t.Fatal("rotate-secret kept the URLs")
	}
	if resp, _ := s.get(t, old["iso"]); resp.StatusCode != 404 {
		t.Errorf("the URL of the rotated secret: %d, want 404", resp.StatusCode)
	}
	if resp, _ := s.get(t, fresh["iso"]); resp.StatusCode != 200 {
		t.Errorf("the URL of the new secret: %d", resp.StatusCode)
	}
	// The minimal ISO of the new secret fetches its rootfs under the new token.
	if resp, body := s.get(t, fresh["minimal-iso"]); resp.StatusCode != 200 ||
		!bytes.Contains(body, []byte("coreos.live.rootfs_url="+fresh["pxe-dir"]+"/rootfs.img")) ||
		bytes.Contains(body, []byte(s.url+"/rootfs.img")) {
		t.Errorf("GET %s: %d, its rootfs URL is not %s/rootfs.img", fresh["minimal-iso"], resp.StatusCode, fresh["pxe-dir"])
	}
	s.stop(t)
}

// --open serves the plain URLs with a warning; the capability URLs are not served.
func TestServeOpen(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	nodes := t.TempDir()
	serveNodeDir(t, nodes, "sno", serveSnoYAML)
	s := startServe(t, "--iso", iso, "--nodes", nodes, "--open")
	if !strings.Contains(s.output(), "Warning: --open") {
		t.Errorf("no warning about --open:\n%s", s.output())
	}
	if resp, _ := s.get(t, s.url+"/sno.iso"); resp.StatusCode != 200 {
		t.Errorf("GET /sno.iso with --open: %d", resp.StatusCode)
	}
	if urls := s.urls(t, nodes, "sno", "--open"); urls["iso"] != s.url+"/sno.iso" {
		t.Errorf("serve urls --open: %v", urls)
	}
	if _, err := os.Stat(filepath.Join(nodes, capability.SecretFileName)); err == nil {
		t.Error("serve --open wrote a secret")
	}
	s.stop(t)
}

// The start-up lines never offer [::] or 0.0.0.0 as the server's URL: no BMC reaches it.
func TestServedURL(t *testing.T) {
	for _, c := range []struct {
		addr    net.Addr
		tls     bool
		baseURL string
		want    string
	}{
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, false, "", "http://HOST:8080"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8443}, true, "", "https://HOST:8443"},
		{&net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8080}, false, "", "http://192.0.2.1:8080"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 80}, false, "", "http://[::1]:80"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, false, "https://sno.example", "https://sno.example"},
	} {
		if got := servedURL(c.addr, c.tls, c.baseURL); got != c.want {
			t.Errorf("servedURL(%v, tls %v, %q) = %q, want %q", c.addr, c.tls, c.baseURL, got, c.want)
		}
	}
}
