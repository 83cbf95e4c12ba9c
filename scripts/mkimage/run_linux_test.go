package main

import (
	"bytes"
	"context"
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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/coreos/stream-metadata-go/stream"

	"github.com/sno-iso/sno-iso/internal/bipgen"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/s3test"
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

// TestImageBuildsFromS3OverTLSAsItsUser runs the image's binary as the runtime would and has
// it build a node's ISO from a live ISO in a real S3 store (SeaweedFS on loopback, TLS with
// the test's own CA) with read-only keys, region and endpoint from the environment only: what
// a replica given AWS_* variables from a Secret does. The store's CA is only in a bundle added
// to the image and named by SSL_CERT_FILE. The object carries its x-amz-meta-sha256, which the
// build checks, and the result is the bytes the same build makes from a local file.
func TestImageBuildsFromS3OverTLSAsItsUser(t *testing.T) {
	testenv.Root(t, "chroot into the unpacked image and run as user 65532")
	bin := staticBinary(t)
	bundle := unpackImage(t, bin)
	rootfs := filepath.Join(bundle, "rootfs")
	proc := readRuntimeProcess(t, bundle)

	liveISO := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	iso, err := os.ReadFile(liveISO)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(iso)
	store := s3test.Start(t)
	store.CreateBucket(t, "isos", false)
	_, err = store.Client(store.ReadWrite).PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String("isos"), Key: aws.String("rhcos/rhcos-live.x86_64.iso"), Body: bytes.NewReader(iso),
		Metadata: map[string]string{"sha256": hex.EncodeToString(sum[:])}})
	if err != nil {
		t.Fatal(err)
	}
	config, err := bipgen.Generate(bipgen.Options{Size: 150000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(store.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	inputs := filepath.Join(rootfs, "tmp", "inputs")
	snoYAML := []byte("coreOSInstallation:\n  installationDisk: /dev/sda\n")
	for dir, files := range map[string]map[string][]byte{
		filepath.Join(rootfs, "etc", "ssl"): {"s3-ca.pem": caPEM},
		inputs:                              {"bootstrap-in-place-for-live-iso.ign": config, "sno.yaml": snoYAML},
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	args := []string{"build", "--ignition", "/tmp/inputs/bootstrap-in-place-for-live-iso.ign", "--config", "/tmp/inputs/sno.yaml"}
	cmd := exec.Command("/usr/bin/sno-iso", append(args, "--iso", "s3://isos/rhcos/rhcos-live.x86_64.iso", "--s3-path-style",
		"-o", "/tmp/sno.iso")...)
	cmd.Dir = proc.Cwd
	cmd.Env = append(append([]string{}, proc.Env...), "HOME=/", "SSL_CERT_FILE=/etc/ssl/s3-ca.pem")
	for _, kv := range store.Env(store.ReadOnly) {
		if !strings.HasPrefix(kv, "AWS_CA_BUNDLE=") { // a path outside the image; SSL_CERT_FILE names the CA
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: proc.User.UID, Gid: proc.User.GID}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sno-iso build from S3 in the image as %d: %v\n%s", proc.User.UID, err, stderr.String())
	}
	for _, keys := range []s3test.Keys{store.ReadOnly, store.ReadWrite} {
		if strings.Contains(stderr.String()+stdout.String(), keys.SecretAccessKey) {
			t.Errorf("the image's binary printed a secret key:\n%s", stderr.String())
		}
	}
	got, err := os.ReadFile(filepath.Join(rootfs, "tmp", "sno.iso"))
	if err != nil {
		t.Fatalf("the build in the image wrote no ISO: %v\n%s", err, stderr.String())
	}
	local := filepath.Join(t.TempDir(), "local.iso")
	hostArgs := []string{"build", "--ignition", filepath.Join(inputs, "bootstrap-in-place-for-live-iso.ign"),
		"--config", filepath.Join(inputs, "sno.yaml"), "--iso", liveISO, "-o", local}
	if out, err := exec.Command(bin, hostArgs...).CombinedOutput(); err != nil {
		t.Fatalf("the same build from the local file: %v\n%s", err, out)
	}
	want, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("the ISO built in the image from S3 differs from the one built from the local file")
	}
}
