package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/s3test"
)

// TestS3ISOSource reads the live ISO from a real S3 store over TLS (SeaweedFS with the test's
// CA) with credentials from the environment: download --url s3://, build and pxe build
// --iso s3:// write what they write from the local file, and each mistake a user makes gets
// an error that names what to fix.
func TestS3ISOSource(t *testing.T) {
	isoPath := withInitramfs(t, stockLiveInitramfs(t))
	iso, err := os.ReadFile(isoPath)
	if err != nil {
		t.Fatal(err)
	}
	st := s3test.Start(t)
	st.CreateBucket(t, "isos", false)
	st.Put(t, "isos", "rhcos/rhcos-live.x86_64.iso", iso)
	const isoURL = "s3://isos/rhcos/rhcos-live.x86_64.iso"
	env := st.Env(st.ReadOnly)
	store := []string{"--s3-endpoint", st.Endpoint, "--s3-path-style", "--ca-file", st.CAFile}

	dir := t.TempDir()
	cache := t.TempDir()
	out := snoEnvOK(t, env, append([]string{"download", "--url", isoURL, "--sha256", bytesSHA(iso), "--cache-dir", cache}, store...)...)
	wantFileBytes(t, strings.TrimSpace(string(out.stdout)), iso)
	// A key with '#', '?', '%' and a space is the object of that key, beside a decoy at the
	// key a URL reading would take.
	const oddKey = "odd/x#1?v 100%.iso"
	st.Put(t, "isos", oddKey, iso)
	st.Put(t, "isos", "odd/x", []byte("decoy"))
	out = snoEnvOK(t, env, append([]string{"download", "--url", "s3://isos/" + oddKey, "--sha256", bytesSHA(iso), "--cache-dir", cache},
		store...)...)
	if got := strings.TrimSpace(string(out.stdout)); filepath.Base(got) != "x#1?v 100%.iso" {
		t.Errorf("download --url s3://isos/%s saved %s", oddKey, got)
	}
	wantFileBytes(t, strings.TrimSpace(string(out.stdout)), iso)

	nodes := t.TempDir()
	ign, cfg := serveNodeDir(t, nodes, "sno", "coreOSInstallation:\n  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3\n")
	common := []string{"--ignition", ign, "--config", cfg}
	fromFile, fromS3 := filepath.Join(dir, "from-file.iso"), filepath.Join(dir, "from-s3.iso")
	mustSno(t, nil, append([]string{"build", "--iso", isoPath, "-o", fromFile}, common...)...)
	snoEnvOK(t, env, append(append([]string{"build", "--iso", isoURL, "-o", fromS3}, common...), store...)...)
	if a, b := fileSHA(t, fromFile), fileSHA(t, fromS3); a != b {
		t.Errorf("build --iso s3:// wrote sha256 %s, build --iso FILE %s", b, a)
	}
	pxeFile, pxeS3 := filepath.Join(dir, "pxe-file"), filepath.Join(dir, "pxe-s3")
	mustSno(t, nil, append([]string{"pxe", "build", "--iso", isoPath, "-o", pxeFile}, common...)...)
	snoEnvOK(t, env, append(append([]string{"pxe", "build", "--iso", isoURL, "-o", pxeS3}, common...), store...)...)
	for _, name := range []string{"vmlinuz", "initrd.img", "rootfs.img", "boot.ipxe"} {
		if a, b := fileSHA(t, filepath.Join(pxeFile, name)), fileSHA(t, filepath.Join(pxeS3, name)); a != b {
			t.Errorf("pxe build %s: sha256 %s from s3://, %s from the file", name, b, a)
		}
	}

	// Endpoint and CA from the environment alone (AWS_ENDPOINT_URL_S3, AWS_CA_BUNDLE).
	viaEnv := filepath.Join(dir, "via-env.iso")
	snoEnvOK(t, env, append([]string{"build", "--iso", isoURL, "-o", viaEnv, "--s3-path-style"}, common...)...)
	if a, b := fileSHA(t, fromFile), fileSHA(t, viaEnv); a != b {
		t.Errorf("build with the store from the environment wrote sha256 %s, want %s", b, a)
	}

	failed := filepath.Join(dir, "failed.iso")
	build := func(env []string, url string, flags ...string) result {
		return snoEnv(t, env, append(append([]string{"build", "--iso", url, "-o", failed}, common...), flags...)...)
	}
	r := build(st.Env(st.Wrong), isoURL, store...)
	wantFailure(t, r, isoURL, "access denied", "AWS_ACCESS_KEY_ID")
	if strings.Contains(string(r.stderr), st.Wrong.SecretAccessKey) {
		t.Errorf("the error shows the secret key:\n%s", r.stderr)
	}
	wantFailure(t, build(env, "s3://isos/rhcos/missing.iso", store...), "no such bucket or key", "--s3-endpoint")
	wantFailure(t, build(append(env, "AWS_CA_BUNDLE="), isoURL, "--s3-endpoint", st.Endpoint, "--s3-path-style"),
		"certificate", "--ca-file")
	wantFailure(t, build(s3test.IsolatedEnv(dir), isoURL, store...), "no AWS credentials", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE")
	wantFailure(t, build(s3test.IsolatedEnv(dir), "s3://isos/x.iso", "--s3-endpoint", "isos.example"), "--s3-endpoint", "http(s)://")
	if _, err := os.Stat(failed); !os.IsNotExist(err) {
		t.Errorf("a failed build left %s behind (%v)", failed, err)
	}
	r = snoEnv(t, st.Env(st.Wrong), append([]string{"download", "--url", isoURL, "--sha256", bytesSHA(iso), "--cache-dir", t.TempDir()}, store...)...)
	wantError(t, r, "403", "access denied", "AWS_ACCESS_KEY_ID")
}
