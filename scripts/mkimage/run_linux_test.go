package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/coreos/stream-metadata-go/stream"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// TestImageDownloadsOverTLSAsItsUser runs the image's own binary as the runtime would: chrooted
// into the unpacked layer, as user 65532 with the image's environment and no home directory. It
// downloads from a stream over https from a server whose CA exists only in a bundle added to
// the image and named by SSL_CERT_FILE, so the image must honour SSL_CERT_FILE, and its
// cache must land somewhere that user can write.
func TestImageDownloadsOverTLSAsItsUser(t *testing.T) {
	testenv.Root(t, "chroot into the unpacked image and run as user 65532")
	bin := staticBinary(t)
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil || !bytes.Contains(out, []byte("golang.org/x/crypto/x509roots/fallback")) {
		t.Errorf("the image's binary does not carry fallback CA roots for an image without a bundle: %v\n%s", err, out)
	}
	bundle := unpackImage(t, bin)
	rootfs := filepath.Join(bundle, "rootfs")
	proc := readRuntimeProcess(t, bundle)

	certFile, keyFile := fixtures.SelfSignedCert(t, t.TempDir())
	caPEM, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(rootfs, "etc", "ssl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "etc", "ssl", "test-ca.pem"), caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}

	iso := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{7}).Read(iso)
	sum := sha256.Sum256(iso)
	var requests atomic.Int32
	files := map[string][]byte{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) > 8 {
			http.Error(w, "more requests than the test expects", http.StatusTooManyRequests)
			return
		}
		data, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "", epoch, bytes.NewReader(data))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	meta, err := json.Marshal(stream.Stream{Stream: "rhcos-test", Architectures: map[string]stream.Arch{
		"x86_64": {Artifacts: map[string]stream.PlatformArtifacts{"metal": {Release: "1", Formats: map[string]stream.ImageFormat{
			"iso": {Disk: &stream.Artifact{Location: srv.URL + "/rhcos-live.x86_64.iso", Sha256: hex.EncodeToString(sum[:])}},
		}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	files["/stream.json"], files["/rhcos-live.x86_64.iso"] = meta, iso

	cmd := exec.Command("/usr/bin/sno-iso", "download", "--stream", srv.URL+"/stream.json", "--arch", "x86_64")
	cmd.Dir = proc.Cwd
	cmd.Env = append(append([]string{}, proc.Env...), "HOME=/", "SSL_CERT_FILE=/etc/ssl/test-ca.pem")
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: proc.User.UID, Gid: proc.User.GID}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sno-iso download in the image as %d: %v\n%s", proc.User.UID, err, stderr.String())
	}
	path := strings.TrimSpace(stdout.String())
	if !strings.HasPrefix(path, cacheHome+"/sno-iso/") {
		t.Errorf("downloaded to %q, want a path in the image's cache %s/sno-iso", path, cacheHome)
	}
	got, err := os.ReadFile(filepath.Join(rootfs, path))
	if err != nil || !bytes.Equal(got, iso) {
		t.Fatalf("the image's cache does not hold the ISO at %s: %v", path, err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(rootfs, path), &st); err != nil || st.Uid != proc.User.UID {
		t.Errorf("the cached ISO belongs to %d, want the image's user %d (%v)", st.Uid, proc.User.UID, err)
	}
}
