package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/s3test"
)

// TestDownloadUploadToS3 mirrors a verified download into a real S3 store (SeaweedFS on
// loopback over TLS), with credentials, endpoint and CA from the environment only.
func TestDownloadUploadToS3(t *testing.T) {
	store := s3test.Start(t)
	store.CreateBucket(t, "mirror", false)
	iso := randomBytes(40<<20+5, 11)
	srv := newArtifactServer(t, 4, map[string][]byte{"/rhcos/rhcos-live.x86_64.iso": iso})
	url := srv.URL + "/rhcos/rhcos-live.x86_64.iso"
	cache := t.TempDir()
	args := []string{"download", "--url", url, "--sha256", bytesSHA(iso), "--cache-dir", cache, "--s3-path-style"}
	env := store.Env(store.ReadWrite)

	t.Run("uploaded after the check, then skipped", func(t *testing.T) {
		r := snoEnvOK(t, env, append(args, "--upload", "s3://mirror/fleet/")...)
		const key = "fleet/rhcos-live.x86_64.iso"
		want := "Uploaded rhcos-live.x86_64.iso to s3://mirror/" + key + " (sha256 " + bytesSHA(iso) + ")"
		if !strings.Contains(string(r.stderr), want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
		if got := strings.TrimSpace(string(r.stdout)); got != filepath.Join(cache, bytesSHA(iso), "rhcos-live.x86_64.iso") {
			t.Errorf("stdout %q is not the cached file's path", got)
		}
		if got := store.Get(t, store.ReadOnly, "mirror", key); !bytes.Equal(got, iso) {
			t.Fatal("the object is not the downloaded file")
		}
		head := headObject(t, store, "mirror", key)
		if got := head.Metadata["sha256"]; got != bytesSHA(iso) {
			t.Errorf("x-amz-meta-sha256 = %q, want %s", got, bytesSHA(iso))
		}
		requests := srv.count()
		r = snoEnvOK(t, env, append(args, "--upload", "s3://mirror/"+key)...)
		if !strings.Contains(string(r.stderr), "already holds rhcos-live.x86_64.iso") {
			t.Errorf("the second run does not say it skipped the upload:\n%s", r.stderr)
		}
		if srv.count() != requests {
			t.Errorf("the second run downloaded again: %d requests after %d", srv.count(), requests)
		}
		if etag := aws.ToString(headObject(t, store, "mirror", key).ETag); etag != aws.ToString(head.ETag) {
			t.Errorf("the object was written again: ETag %s, was %s", etag, aws.ToString(head.ETag))
		}
	})

	t.Run("read back by download --url s3://, a tampered object named", func(t *testing.T) {
		readEnv := store.Env(store.ReadOnly)
		get := func(key string) result {
			return snoEnv(t, readEnv, "download", "--url", "s3://mirror/"+key, "--sha256", bytesSHA(iso),
				"--cache-dir", t.TempDir(), "--s3-path-style")
		}
		r := snoEnvOK(t, readEnv, "download", "--url", "s3://mirror/fleet/rhcos-live.x86_64.iso", "--sha256", bytesSHA(iso),
			"--cache-dir", t.TempDir(), "--s3-path-style")
		if got := fileSHA(t, strings.TrimSpace(string(r.stdout))); got != bytesSHA(iso) {
			t.Fatalf("downloaded sha256 %s, want %s", got, bytesSHA(iso))
		}
		// Bytes replaced, metadata kept: what the metadata is for.
		tampered := append([]byte(nil), iso...)
		tampered[len(tampered)/3] ^= 1
		_, err := store.Client(store.ReadWrite).PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("mirror"),
			Key: aws.String("tampered.iso"), Body: bytes.NewReader(tampered), Metadata: map[string]string{"sha256": bytesSHA(iso)}})
		if err != nil {
			t.Fatal(err)
		}
		r = get("tampered.iso")
		if r.code != 1 {
			t.Errorf("exit %d, want 1", r.code)
		}
		wantBMCFailure(t, r, "s3://mirror/tampered.iso", "x-amz-meta-sha256 records the expected digest",
			"its bytes were changed after it was uploaded")
	})

	t.Run("killed mid-upload, the next run completes it", func(t *testing.T) {
		const key = "killed/rhcos-live.x86_64.iso"
		// A relay that passes the store's bytes at 8 MB/s keeps the upload going for
		// seconds: long enough to be killed with parts sent and the upload not complete.
		relay := throttledRelay(t, strings.TrimPrefix(store.Endpoint, "https://"), 8<<20)
		slowEnv := append(append([]string{}, env...), "AWS_ENDPOINT_URL_S3=https://"+relay)
		cmd := exec.Command(snoISO(t), append(args, "--upload", "s3://mirror/"+key)...)
		cmd.Env = append(environWithoutBMCAccount(), slowEnv...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c := store.Client(store.ReadWrite)
		if !waitForParts(c, "mirror", key, 60*time.Second) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no part of the upload reached the store within a minute:\n%s", stderr.String())
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		_, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String("mirror"), Key: aws.String(key)})
		if err == nil {
			t.Fatalf("after the kill an object is under %s; want none until an upload completes\n%s", key, stderr.String())
		}
		if n := len(multipartUploads(t, store, "mirror", key)); n != 1 {
			t.Fatalf("after the kill %d unfinished uploads to %s, want the killed one", n, key)
		}

		r := snoEnvOK(t, env, append(args, "--upload", "s3://mirror/"+key)...)
		if !strings.Contains(string(r.stderr), "after aborting 1 unfinished upload") {
			t.Errorf("the rerun does not say it aborted the killed run's upload:\n%s", r.stderr)
		}
		if n := len(multipartUploads(t, store, "mirror", key)); n != 0 {
			t.Errorf("%d unfinished uploads left after the rerun", n)
		}
		if got := store.Get(t, store.ReadOnly, "mirror", key); !bytes.Equal(got, iso) {
			t.Fatal("the object is not the downloaded file")
		}
	})

	t.Run("refused: clear errors, no secret shown", func(t *testing.T) {
		noCA := withoutEnv(env, "AWS_CA_BUNDLE")
		for _, tc := range []struct {
			name  string
			env   []string
			dest  string
			wants []string
		}{
			{"unknown keys", store.Env(store.Wrong), "s3://mirror/x.iso",
				[]string{"InvalidAccessKeyId", "credentials", "AWS_ACCESS_KEY_ID"}},
			{"read-only keys", store.Env(store.ReadOnly), "s3://mirror/x.iso", []string{"AccessDenied", "s3:PutObject"}},
			{"no such bucket", env, "s3://nonesuch/x.iso", []string{"NoSuchBucket", "bucket nonesuch does not exist"}},
			{"untrusted certificate", noCA, "s3://mirror/x.iso", []string{"certificate", "--ca-file"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := snoEnv(t, tc.env, append(args, "--upload", tc.dest)...)
				if r.code != 1 {
					t.Errorf("exit %d, want 1", r.code)
				}
				wantBMCFailure(t, r, tc.wants...) // the upload's first line, then the error
				for _, keys := range []s3test.Keys{store.ReadWrite, store.ReadOnly, store.Wrong} {
					if bytes.Contains(r.stderr, []byte(keys.SecretAccessKey)) {
						t.Errorf("stderr shows a secret key:\n%s", r.stderr)
					}
				}
			})
		}
		if _, err := store.Client(store.ReadWrite).HeadObject(context.Background(),
			&s3.HeadObjectInput{Bucket: aws.String("mirror"), Key: aws.String("x.iso")}); err == nil {
			t.Error("a refused upload left an object")
		}
	})
}

func TestDownloadUploadSeveralFilesNeedAPrefix(t *testing.T) {
	kernel, initramfs, rootfs := []byte("kernel"), []byte("initramfs"), []byte("rootfs")
	srv := newArtifactServer(t, 0, nil)
	streamFile := writeStream(t, t.TempDir(), srv.URL, []byte("iso"), kernel, initramfs, rootfs)
	r := sno(t, nil, "download", "--stream", streamFile, "--arch", "x86_64", "--format", "pxe",
		"--cache-dir", t.TempDir(), "--upload", "s3://mirror/pxe")
	if r.code != 2 {
		t.Errorf("exit %d, want 2 (usage)", r.code)
	}
	wantFailure(t, r, "s3://mirror/pxe names one object", "3 files", "end it with /")
}

func headObject(t *testing.T, store *s3test.Store, bucket, key string) *s3.HeadObjectOutput {
	t.Helper()
	out, err := store.Client(store.ReadOnly).HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// multipartUploads lists the unfinished multipart uploads to exactly key.
func multipartUploads(t *testing.T, store *s3test.Store, bucket, key string) []string {
	t.Helper()
	out, err := store.Client(store.ReadWrite).ListMultipartUploads(context.Background(),
		&s3.ListMultipartUploadsInput{Bucket: &bucket, Prefix: &key})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, u := range out.Uploads {
		if aws.ToString(u.Key) == key {
			ids = append(ids, aws.ToString(u.UploadId))
		}
	}
	return ids
}

// waitForParts waits until an unfinished upload to key holds a part, up to limit.
func waitForParts(c *s3.Client, bucket, key string, limit time.Duration) bool {
	ctx := context.Background()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		ups, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket, Prefix: &key})
		if err != nil {
			continue
		}
		for _, u := range ups.Uploads {
			parts, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: &bucket, Key: u.Key, UploadId: u.UploadId})
			if err == nil && len(parts.Parts) > 0 {
				return true
			}
		}
	}
	return false
}

// throttledRelay forwards connections from a 127.0.0.1 port of its own to target, passing
// the client's bytes at most rate bytes a second, and returns its address. It stops with t.
func throttledRelay(t *testing.T, target string, rate int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			upstream, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, client, upstream)
			mu.Unlock()
			wg.Go(func() {
				defer upstream.Close()
				const chunk = 32 << 10
				buf := make([]byte, chunk)
				for {
					n, err := client.Read(buf)
					if n > 0 {
						if _, werr := upstream.Write(buf[:n]); werr != nil {
							return
						}
						time.Sleep(time.Duration(n) * time.Second / time.Duration(rate))
					}
					if err != nil {
						return
					}
				}
			})
			wg.Go(func() {
				defer client.Close()
				io.Copy(client, upstream)
			})
		}
	})
	return ln.Addr().String()
}

// withoutEnv is env without the variable name.
func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// TestBuildChecksAnS3ObjectsSHA256 builds from objects that carry x-amz-meta-sha256: the
// untouched one builds, the one whose bytes were replaced under the same metadata fails the
// build, which leaves no output.
func TestBuildChecksAnS3ObjectsSHA256(t *testing.T) {
	store := s3test.Start(t)
	store.CreateBucket(t, "isos", false)
	iso, err := os.ReadFile(fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	if err != nil {
		t.Fatal(err)
	}
	tampered := append([]byte(nil), iso...)
	tampered[100] ^= 0xff // in the boot code of the MBR: copied to the output unchanged
	for key, body := range map[string][]byte{"good.iso": iso, "tampered.iso": tampered} {
		_, err := store.Client(store.ReadWrite).PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("isos"),
			Key: aws.String(key), Body: bytes.NewReader(body), Metadata: map[string]string{"sha256": bytesSHA(iso)}})
		if err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	ign := bipConfig(t, dir, 150000)
	cfg := writeFile(t, filepath.Join(dir, "sno.yaml"), "coreOSInstallation:\n  installationDisk: /dev/sda\n")
	env := store.Env(store.ReadOnly)
	build := func(key, out string) result {
		return snoEnv(t, env, "build", "--iso", "s3://isos/"+key, "--s3-path-style", "--ignition", ign, "--config", cfg, "-o", out)
	}

	good := filepath.Join(dir, "good-out.iso")
	if r := build("good.iso", good); r.code != 0 {
		t.Fatalf("build from the untouched object: exit %d\n%s", r.code, r.stderr)
	}
	bad := filepath.Join(dir, "tampered-out.iso")
	r := build("tampered.iso", bad)
	if r.code != 1 {
		t.Errorf("build from the tampered object: exit %d, want 1", r.code)
	}
	wantFailure(t, r, "s3://isos/tampered.iso", "x-amz-meta-sha256", bytesSHA(iso))
	if names := dirEntries(t, dir); slices.Contains(names, "tampered-out.iso") {
		t.Errorf("the failed build left its output: %q", names)
	}
}
