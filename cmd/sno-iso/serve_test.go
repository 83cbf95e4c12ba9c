package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
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

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/node"
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
	s := &servedNode{cmd: exec.Command(snoISO(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)}
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
			if m := regexp.MustCompile(`at (http://\S+)/ `).FindStringSubmatch(sc.Text()); m != nil {
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
	cfg = writeFile(t, filepath.Join(dir, node.DirConfig), snoYAML)
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
	out := t.TempDir()

	full := filepath.Join(out, "full.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", full)
	if got, want := s.sha(t, "/sno.iso"), fileSHA(t, full); got != want {
		t.Errorf("/sno.iso has SHA-256 %s, build wrote %s", got, want)
	}
	minimal := filepath.Join(out, "minimal.iso")
	mustSno(t, nil, "build", "--minimal", "--rootfs-url", s.url+"/rootfs.img", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", minimal)
	if got, want := s.sha(t, "/sno-minimal.iso"), fileSHA(t, minimal); got != want {
		t.Errorf("/sno-minimal.iso has SHA-256 %s, build --minimal wrote %s", got, want)
	}
	if !strings.Contains(s.output(), `"GET /sno.iso HTTP/1.1" 200`) {
		t.Errorf("no access log line for /sno.iso:\n%s", s.output())
	}
	s.stop(t)
}

func TestServeMatchesPXEBuild(t *testing.T) {
	iso := withInitramfs(t, stockLiveInitramfs(t))
	nodes := t.TempDir()
	ign, cfg := serveNodeDir(t, nodes, "sno", serveSnoYAML)
	// A broken node next to it: a clear error for it, the others unaffected.
	os.Mkdir(filepath.Join(nodes, "broken"), 0o755)
	writeFile(t, filepath.Join(nodes, "broken", node.DirIgnition), `{"ignition":{"version":"3.2.0"`)
	s := startServe(t, "--iso", iso, "--nodes", nodes)

	dir := filepath.Join(t.TempDir(), "pxe")
	mustSno(t, nil, "pxe", "build", "--iso", iso, "--ignition", ign, "--config", cfg, "--base-url", s.url+"/sno", "-o", dir)
	for _, name := range []string{"vmlinuz", "initrd.img", "rootfs.img", "boot.ipxe"} {
		if got, want := s.sha(t, "/sno/"+name), fileSHA(t, filepath.Join(dir, name)); got != want {
			t.Errorf("/sno/%s has SHA-256 %s, pxe build wrote %s", name, got, want)
		}
	}
	if got, want := s.sha(t, "/rootfs.img"), fileSHA(t, filepath.Join(dir, "rootfs.img")); got != want {
		t.Errorf("/rootfs.img has SHA-256 %s, pxe build wrote %s", got, want)
	}
	resp, err := http.Get(s.url + "/broken.iso")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || !strings.Contains(string(body), filepath.Join(nodes, "broken", node.DirIgnition)) {
		t.Errorf("GET /broken.iso: %d %q, want 500 naming the file", resp.StatusCode, body)
	}
	s.stop(t)
}

func TestServeUsage(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	for _, tt := range []struct {
		args  []string
		code  int
		wants []string
	}{
		{[]string{"serve", "--iso", iso}, 2, []string{"needs --nodes"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--max-concurrent", "0"}, 2, []string{"--max-concurrent"}},
		{[]string{"serve", "--iso", iso, "--nodes", t.TempDir(), "--base-url", "ftp://x"}, 2, []string{"http://"}},
		{[]string{"serve", "--iso", iso, "--nodes", filepath.Join(t.TempDir(), "none"), "--listen", "127.0.0.1:0"}, 1, []string{"none"}},
		{[]string{"serve", "--iso", iso, "--nodes", iso, "--listen", "127.0.0.1:0"}, 1, []string{"not a directory"}},
		{[]string{"serve", "--iso", fixtures.File(t, "synthetic.iso"), "--nodes", t.TempDir(), "--listen", "127.0.0.1:0"}, 1, []string{"synthetic.iso"}},
	} {
		r := sno(t, nil, tt.args...)
		if r.code != tt.code {
			t.Errorf("%q: exit %d, want %d: %s", tt.args, r.code, tt.code, r.stderr)
		}
		wantFailure(t, r, tt.wants...)
	}
}
