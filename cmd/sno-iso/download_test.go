package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/coreos/stream-metadata-go/stream"
)

// artifactServer serves files by path from 127.0.0.1 and fails the test beyond maxRequests.
type artifactServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests int
	// hold, when set, runs before each answer.
	hold func(path string)
}

func newArtifactServer(t *testing.T, maxRequests int, files map[string][]byte) *artifactServer {
	s := &artifactServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests++
		n, hold := s.requests, s.hold
		s.mu.Unlock()
		if n > maxRequests {
			t.Errorf("request %d for %s: more than the %d expected", n, r.URL.Path, maxRequests)
			w.WriteHeader(http.StatusTeapot)
			return
		}
		if hold != nil {
			hold(r.URL.Path)
		}
		data, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"`+bytesSHA(data)[:16]+`"`)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *artifactServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	var key [32]byte
	key[0] = byte(seed)
	rand.NewChaCha8(key).Read(b)
	return b
}

// writeStream writes stream metadata, as openshift-install prints it, whose x86_64 metal
// artifacts are iso and the PXE files at base; it returns the file's path.
func writeStream(t *testing.T, dir, base string, iso, kernel, initramfs, rootfs []byte) string {
	t.Helper()
	art := func(name string, data []byte) *stream.Artifact {
		return &stream.Artifact{Location: base + "/" + name, Sha256: bytesSHA(data)}
	}
	s := stream.Stream{Stream: "rhcos-4.18", Architectures: map[string]stream.Arch{
		"x86_64": {Artifacts: map[string]stream.PlatformArtifacts{"metal": {Release: "418.94.202501221327-0", Formats: map[string]stream.ImageFormat{
			"iso": {Disk: art("rhcos-live-iso.x86_64.iso", iso)},
			"pxe": {Kernel: art("rhcos-live-kernel.x86_64", kernel), Initramfs: art("rhcos-live-initramfs.x86_64.img", initramfs),
				Rootfs: art("rhcos-live-rootfs.x86_64.img", rootfs)},
		}}}},
	}}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, filepath.Join(dir, "stream.json"), string(raw))
}

// downloadFixture is a stream of four distinct artifacts served from a loopback server.
type downloadFixture struct {
	server                         *artifactServer
	stream, cache                  string
	iso, kernel, initramfs, rootfs []byte
}

func newDownloadFixture(t *testing.T, maxRequests int) *downloadFixture {
	f := &downloadFixture{iso: randomBytes(3<<20, 1), kernel: randomBytes(1<<20, 2), initramfs: randomBytes(1<<20, 3), rootfs: randomBytes(2<<20, 4)}
	f.server = newArtifactServer(t, maxRequests, map[string][]byte{
		"/rhcos-live-iso.x86_64.iso": f.iso, "/rhcos-live-kernel.x86_64": f.kernel,
		"/rhcos-live-initramfs.x86_64.img": f.initramfs, "/rhcos-live-rootfs.x86_64.img": f.rootfs,
	})
	f.stream = writeStream(t, t.TempDir(), f.server.URL, f.iso, f.kernel, f.initramfs, f.rootfs)
	f.cache = t.TempDir()
	return f
}

func (f *downloadFixture) args(more ...string) []string {
	return append([]string{"download", "--stream", f.stream, "--arch", "x86_64", "--cache-dir", f.cache}, more...)
}

// wantError asserts a failure whose stderr, after any progress lines, is an error saying
// each of wants.
func wantError(t *testing.T, r result, wants ...string) {
	t.Helper()
	stderr := string(r.stderr)
	if i := strings.Index(stderr, "Error: "); r.code == 0 || i < 0 || (i > 0 && stderr[i-1] != '\n') {
		t.Fatalf("exit %d, stderr %q: want an error line", r.code, stderr)
	}
	for _, w := range wants {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not say %q", stderr, w)
		}
	}
}

func wantFileBytes(t *testing.T, path string, want []byte) {
	t.Helper()
	if got := fileSHA(t, path); got != bytesSHA(want) {
		t.Errorf("%s: sha256 %s, want %s", path, got, bytesSHA(want))
	}
}

func TestDownloadPrintsOnlyThePath(t *testing.T) {
	f := newDownloadFixture(t, 1)
	r := sno(t, nil, f.args()...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := filepath.Join(f.cache, bytesSHA(f.iso), "rhcos-live-iso.x86_64.iso")
	if string(r.stdout) != want+"\n" {
		t.Fatalf("stdout %q, want the path %q alone", r.stdout, want)
	}
	wantFileBytes(t, want, f.iso)
	if !strings.Contains(string(r.stderr), "Downloading "+f.server.URL+"/rhcos-live-iso.x86_64.iso") {
		t.Errorf("stderr does not say what is downloaded: %s", r.stderr)
	}
	// A hit: no request (the server allows one), the same path.
	if again := mustSno(t, nil, f.args()...); string(again) != want+"\n" {
		t.Errorf("second run printed %q", again)
	}
}

func TestDownloadPXEIntoDirectory(t *testing.T) {
	f := newDownloadFixture(t, 3)
	dir := filepath.Join(t.TempDir(), "pxe")
	out := mustSno(t, nil, f.args("--format", "pxe", "-C", dir)...)
	names := []string{"rhcos-live-kernel.x86_64", "rhcos-live-initramfs.x86_64.img", "rhcos-live-rootfs.x86_64.img"}
	var want []string
	for _, n := range names {
		want = append(want, filepath.Join(dir, n))
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("stdout %q, want %q", got, want)
	}
	for i, data := range [][]byte{f.kernel, f.initramfs, f.rootfs} {
		wantFileBytes(t, want[i], data)
	}
	r := sno(t, nil, f.args("--format", "pxe", "-C", dir)...)
	wantFailure(t, r, want[0], "--force")
	mustSno(t, nil, f.args("--format", "pxe", "-C", dir, "--force")...)
}

func TestDownloadURLWithMirrorSums(t *testing.T) {
	iso := randomBytes(2<<20, 5)
	other := bytesSHA([]byte("another file"))
	sums := fmt.Sprintf("%s  rhcos-4.18.1-x86_64-live-iso.x86_64.iso\n%s  rhcos-4.18.1-x86_64-live-kernel.x86_64\n", bytesSHA(iso), other)
	s := newArtifactServer(t, 3, map[string][]byte{
		"/4.18/latest/rhcos-4.18.1-x86_64-live-iso.x86_64.iso": iso,
		"/4.18/latest/sha256sum.txt":                           []byte(sums),
	})
	cache := t.TempDir()
	base := s.URL + "/4.18/latest/"
	out := mustSno(t, nil, "download", "--url", base+"rhcos-4.18.1-x86_64-live-iso.x86_64.iso", "--sha256sum-url", base+"sha256sum.txt", "--cache-dir", cache)
	wantFileBytes(t, strings.TrimSpace(string(out)), iso)
	r := sno(t, nil, "download", "--url", base+"rhcos-4.18.1-x86_64-live-rootfs.x86_64.img", "--sha256sum-url", base+"sha256sum.txt", "--cache-dir", cache)
	wantError(t, r, "no digest for rhcos-4.18.1-x86_64-live-rootfs.x86_64.img", "rhcos-4.18.1-x86_64-live-kernel.x86_64")
}

func TestDownloadWrongDigestLeavesNothing(t *testing.T) {
	iso := randomBytes(1<<20, 6)
	s := newArtifactServer(t, 1, map[string][]byte{"/live.iso": iso})
	cache := t.TempDir()
	want := bytesSHA([]byte("what the mirror promised"))
	r := sno(t, nil, "download", "--url", s.URL+"/live.iso", "--sha256", strings.ToUpper(want), "--cache-dir", cache)
	wantError(t, r, s.URL+"/live.iso", want, bytesSHA(iso))
	if left := dirEntries(t, filepath.Join(cache, want)); strings.Join(left, " ") != ".lock" {
		t.Errorf("cache entry holds %q after a mismatch", left)
	}
}

func TestDownloadStreamLacksArch(t *testing.T) {
	f := newDownloadFixture(t, 0)
	r := sno(t, nil, "download", "--stream", f.stream, "--arch", "aarch64", "--cache-dir", f.cache)
	wantFailure(t, r, `no architecture "aarch64"`, "x86_64", "--arch")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
}

func TestDownloadUsageErrors(t *testing.T) {
	hex := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"download"}, "--stream SOURCE"},
		{[]string{"download", "--stream", "stable", "--url", "http://127.0.0.1/x"}, "give one"},
		{[]string{"download", "--url", "http://127.0.0.1/x"}, "--sha256"},
		{[]string{"download", "--url", "http://127.0.0.1/x", "--sha256", "abc"}, "64 hex digits"},
		{[]string{"download", "--url", "http://127.0.0.1/x", "--sha256", hex, "--sha256sum-url", "http://127.0.0.1/s"}, "one of them"},
		{[]string{"download", "--url", "http://127.0.0.1/x", "--sha256", hex, "--format", "pxe"}, "--format"},
		{[]string{"download", "--stream", "stable", "--sha256", hex}, "go with --url"},
		{[]string{"download", "--stream", "stable", "--format", "qcow2"}, "iso or pxe"},
		{[]string{"build", "--ignition", "x.ign"}, "needs --iso FILE or --stream SOURCE"},
		{[]string{"build", "--ignition", "x.ign", "--iso", "a.iso", "--stream", "stable"}, "give one"},
		{[]string{"pxe", "build", "--ignition", "x.ign", "-o", "out"}, "needs --iso FILE or --stream SOURCE"},
		{[]string{"serve", "--nodes", "nodes", "--iso", "a.iso", "--arch", "aarch64"}, "--arch goes with --stream"},
	} {
		r := sno(t, nil, tc.args...)
		wantFailure(t, r, tc.want)
		if r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (usage)", tc.args, r.code)
		}
	}
}

// TestBuildPXEBuildAndServeFromStream: build, pxe build and serve with --stream make what
// they make with --iso and the stream's ISO, and once it is cached they need no network.
func TestBuildPXEBuildAndServeFromStream(t *testing.T) {
	// A fixture ISO with a real live initramfs, so that pxe build can customize it too.
	isoPath := withInitramfs(t, stockLiveInitramfs(t))
	iso, err := os.ReadFile(isoPath)
	if err != nil {
		t.Fatal(err)
	}
	s := newArtifactServer(t, 1, map[string][]byte{"/rhcos-live-iso.x86_64.iso": iso})
	dir := t.TempDir()
	streamFile := writeStream(t, dir, s.URL, iso, nil, nil, nil)
	nodes := t.TempDir()
	ign, cfg := serveNodeDir(t, nodes, "sno", "coreOSInstallation:\n  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3\n")
	cache := t.TempDir()
	common := []string{"--ignition", ign, "--config", cfg}
	fromISO := filepath.Join(dir, "from-iso.iso")
	mustSno(t, nil, append([]string{"build", "--iso", isoPath, "-o", fromISO}, common...)...)
	fromStream := filepath.Join(dir, "from-stream.iso")
	mustSno(t, nil, append([]string{"build", "--stream", streamFile, "--arch", "x86_64", "--cache-dir", cache, "-o", fromStream}, common...)...)
	if a, b := fileSHA(t, fromISO), fileSHA(t, fromStream); a != b {
		t.Errorf("build --stream wrote sha256 %s, build --iso %s", b, a)
	}
	s.Close()
	again := filepath.Join(dir, "again.iso")
	mustSno(t, nil, append([]string{"build", "--stream", streamFile, "--arch", "x86_64", "--cache-dir", cache, "-o", again}, common...)...)
	if a, b := fileSHA(t, fromISO), fileSHA(t, again); a != b {
		t.Errorf("build --stream from the cache wrote sha256 %s, build --iso %s", b, a)
	}
	wantFileBytes(t, filepath.Join(cache, bytesSHA(iso), "rhcos-live-iso.x86_64.iso"), iso)
	// pxe build takes the cached ISO the same way.
	pxeISO, pxeStream := filepath.Join(dir, "pxe-iso"), filepath.Join(dir, "pxe-stream")
	mustSno(t, nil, append([]string{"pxe", "build", "--iso", isoPath, "-o", pxeISO}, common...)...)
	mustSno(t, nil, append([]string{"pxe", "build", "--stream", streamFile, "--arch", "x86_64", "--cache-dir", cache, "-o", pxeStream}, common...)...)
	for _, name := range []string{"vmlinuz", "initrd.img", "rootfs.img", "boot.ipxe"} {
		if a, b := fileSHA(t, filepath.Join(pxeISO, name)), fileSHA(t, filepath.Join(pxeStream, name)); a != b {
			t.Errorf("pxe build %s: sha256 %s from --stream, %s from --iso", name, b, a)
		}
	}
	// serve as well.
	served := startServe(t, "--stream", streamFile, "--arch", "x86_64", "--cache-dir", cache, "--nodes", nodes)
	isoURL := served.urls(t, nodes, "sno")["iso"]
	if got, want := served.sha(t, strings.TrimPrefix(isoURL, served.url)), fileSHA(t, fromISO); got != want {
		t.Errorf("serve --stream: %s has sha256 %s, build --iso wrote %s", isoURL, got, want)
	}
	served.stop(t)
}

// TestDownloadTwoProcessesFetchOnce runs two sno-iso processes for one artifact: the server
// holds the first download until the second says it waits for it, and sees one request.
func TestDownloadTwoProcessesFetchOnce(t *testing.T) {
	f := newDownloadFixture(t, 1)
	waiting := make(chan struct{})
	var once sync.Once
	f.server.mu.Lock()
	f.server.hold = func(string) {
		select {
		case <-waiting:
		case <-time.After(15 * time.Second):
			t.Error("the second process never waited for the first")
		}
	}
	f.server.mu.Unlock()
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	for i := range 2 {
		cmd := exec.Command(snoISO(t), f.args()...)
		cmd.Stdout = &outs[i]
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "Waiting for another sno-iso") {
					once.Do(func() { close(waiting) })
				}
			}
			errs[i] = cmd.Wait()
		})
	}
	wg.Wait()
	want := filepath.Join(f.cache, bytesSHA(f.iso), "rhcos-live-iso.x86_64.iso") + "\n"
	for i := range 2 {
		if errs[i] != nil || outs[i].String() != want {
			t.Errorf("process %d: %v, stdout %q; want %q", i, errs[i], outs[i].String(), want)
		}
	}
	wantFileBytes(t, strings.TrimSpace(want), f.iso)
	if n := f.server.count(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestDownloadThroughTheEnvironmentsProxy: HTTP_PROXY carries the request for a host that
// only the proxy can reach.
func TestDownloadThroughTheEnvironmentsProxy(t *testing.T) {
	iso := randomBytes(1<<20, 7)
	var proxied []string
	var mu sync.Mutex
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		proxied = append(proxied, r.URL.String())
		n := len(proxied)
		mu.Unlock()
		if r.URL.Host != "mirror.example" || n > 1 {
			http.Error(w, "unexpected request", http.StatusBadGateway)
			return
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(iso))
	}))
	t.Cleanup(proxy.Close)
	cache := t.TempDir()
	cmd := exec.Command(snoISO(t), "download", "--url", "http://mirror.example/rhcos.iso", "--sha256", bytesSHA(iso), "--cache-dir", cache)
	cmd.Env = append(os.Environ(), "HTTP_PROXY="+proxy.URL, "http_proxy="+proxy.URL, "NO_PROXY=", "no_proxy=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	wantFileBytes(t, strings.TrimSpace(string(out)), iso)
	mu.Lock()
	defer mu.Unlock()
	if len(proxied) != 1 || proxied[0] != "http://mirror.example/rhcos.iso" {
		t.Errorf("the proxy saw %q", proxied)
	}
}

// TestDownloadKeyringNeedsSignatures: RHCOS streams carry no signatures, so --keyring
// cannot be honoured and says so, without downloading anything.
func TestDownloadKeyringNeedsSignatures(t *testing.T) {
	f := newDownloadFixture(t, 0)
	key, err := openpgp.NewEntity("signer", "", "signer@example.org", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		t.Fatal(err)
	}
	var keyring bytes.Buffer
	if err := key.Serialize(&keyring); err != nil {
		t.Fatal(err)
	}
	keyFile := writeFile(t, filepath.Join(t.TempDir(), "keys.gpg"), keyring.String())
	r := sno(t, nil, f.args("--keyring", keyFile)...)
	wantError(t, r, "no OpenPGP signature", "drop --keyring")
	r = sno(t, nil, f.args("--keyring", f.stream)...)
	wantError(t, r, "--keyring "+f.stream, "OpenPGP public keys")
}

// TestDownloadInterruptedProcessIsResumed: a process stopped mid-body, by Ctrl-C or killed
// outright, leaves its part file and the response's ETag in the cache; the next run asks
// only for the rest, with If-Range.
func TestDownloadInterruptedProcessIsResumed(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, os.Kill} {
		t.Run(sig.String(), func(t *testing.T) { testDownloadResumesAfter(t, sig) })
	}
}

func testDownloadResumesAfter(t *testing.T, sig os.Signal) {
	iso := randomBytes(4<<20, 8)
	cut := len(iso) * 3 / 10
	etag := `"rhcos-418"`
	var mu sync.Mutex
	var ranges []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ranges = append(ranges, r.Header.Get("Range")+" "+r.Header.Get("If-Range"))
		n := len(ranges)
		mu.Unlock()
		w.Header().Set("ETag", etag)
		switch n {
		case 1: // 30% of the body, then nothing until the client is gone
			w.Header().Set("Content-Length", fmt.Sprint(len(iso)))
			w.Write(iso[:cut])
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(15 * time.Second):
			}
		case 2:
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(iso))
		default:
			http.Error(w, "unexpected request", http.StatusTeapot)
		}
	}))
	t.Cleanup(s.Close)
	cache := t.TempDir()
	args := []string{"download", "--url", s.URL + "/rhcos.iso", "--sha256", bytesSHA(iso), "--cache-dir", cache}
	first := exec.Command(snoISO(t), args...)
	var stderr bytes.Buffer
	first.Stderr = &stderr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(cache, bytesSHA(iso), "rhcos.iso.part")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st, err := os.Stat(part); err == nil && st.Size() == int64(cut) {
			break
		}
		if time.Now().After(deadline) {
			first.Process.Kill()
			first.Wait()
			t.Fatalf("the part never reached %d bytes", cut)
		}
	}
	if err := first.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(); err == nil {
		t.Fatal("the interrupted download succeeded")
	}
	if sig == os.Interrupt && !strings.Contains(stderr.String(), "interrupted; the next run resumes it") {
		t.Errorf("Ctrl-C: stderr %q does not say the download can be resumed", stderr.String())
	}
	out := mustSno(t, nil, args...)
	wantFileBytes(t, strings.TrimSpace(string(out)), iso)
	mu.Lock()
	defer mu.Unlock()
	if want := fmt.Sprintf("bytes=%d- %s", cut, etag); len(ranges) != 2 || ranges[1] != want {
		t.Errorf("requests' Range and If-Range %q, want the second %q", ranges, want)
	}
	if _, err := os.Stat(part); !os.IsNotExist(err) {
		t.Errorf("the part file is still there: %v", err)
	}
}

// TestDownloadStreamFromStandardInput: openshift-install coreos print-stream-json | sno-iso
// download --stream -.
func TestDownloadStreamFromStandardInput(t *testing.T) {
	f := newDownloadFixture(t, 1)
	raw, err := os.ReadFile(f.stream)
	if err != nil {
		t.Fatal(err)
	}
	out := mustSno(t, raw, "download", "--stream", "-", "--arch", "x86_64", "--cache-dir", f.cache)
	wantFileBytes(t, strings.TrimSpace(string(out)), f.iso)
	r := sno(t, []byte(`{"stream":`), "download", "--stream", "-", "--cache-dir", f.cache)
	wantError(t, r, "stream on standard input", "not valid JSON")
}

// TestDownloadSaysWhereToCacheWhenTheDefaultCannotBeMade: a service user whose cache
// directory cannot be created (HOME=/ as a non-root user; here XDG_CACHE_HOME names a file)
// is told how to choose another before anything is fetched.
func TestDownloadSaysWhereToCacheWhenTheDefaultCannotBeMade(t *testing.T) {
	f := newDownloadFixture(t, 0)
	t.Setenv("XDG_CACHE_HOME", writeFile(t, filepath.Join(t.TempDir(), "not-a-directory"), "x"))
	r := sno(t, nil, "download", "--stream", f.stream, "--arch", "x86_64")
	wantError(t, r, "cannot create the cache directory", "--cache-dir DIR or XDG_CACHE_HOME")
	if n := f.server.count(); n != 0 {
		t.Errorf("%d requests before the cache was known to be writable", n)
	}
}
