package main

import (
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/s3test"
)

// TestS3WebIdentitySource: with only a web identity token file and a role in the environment
// (IRSA), download --url s3:// reads the object of a real S3 store (SeaweedFS over TLS) with
// the credentials a fake STS on loopback granted for the token; a token the STS refuses is an
// error that names the token file and the role, not the SDK's chain of calls.
func TestS3WebIdentitySource(t *testing.T) {
	st := s3test.Start(t)
	st.CreateBucket(t, "isos", false)
	data := make([]byte, 200_000)
	rand.Read(data)
	st.Put(t, "isos", "rhcos/live.iso", data)
	const isoURL = "s3://isos/rhcos/live.iso"
	const roleARN = "arn:aws:iam::123456789012:role/sno-iso"

	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("pod-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	sts := s3test.StartSTS(t, roleARN, "sno-iso-pod", tokenFile, time.Hour, 4, map[string]s3test.Keys{"pod-token": st.Session[0]})
	// One --ca-file for both: the store's CA and the STS's certificate.
	bundle, err := os.ReadFile(st.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	bundle = append(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: sts.Server.Certificate().Raw})...)
	caFile := filepath.Join(dir, "ca-bundle.pem")
	if err := os.WriteFile(caFile, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(s3test.IsolatedEnv(dir), "HOME="+dir, "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_CA_BUNDLE=",
		"AWS_REGION="+s3test.Region, "AWS_WEB_IDENTITY_TOKEN_FILE="+tokenFile, "AWS_ROLE_ARN="+roleARN,
		"AWS_ROLE_SESSION_NAME=sno-iso-pod", "AWS_ENDPOINT_URL_STS="+sts.URL)
	download := func(cache string) result {
		return snoEnv(t, env, "download", "--url", isoURL, "--sha256", bytesSHA(data), "--cache-dir", cache,
			"--s3-endpoint", st.Endpoint, "--s3-path-style", "--ca-file", caFile)
	}

	r := download(t.TempDir())
	if r.code != 0 {
		t.Fatalf("download with web identity: exit %d\n%s", r.code, r.stderr)
	}
	wantFileBytes(t, strings.TrimSpace(string(r.stdout)), data)
	if got := sts.Received(); !slices.Equal(got, []string{"pod-token"}) {
		t.Errorf("the STS was sent %q, want the token file's token once", got)
	}

	if err := os.WriteFile(tokenFile, []byte("revoked-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = download(t.TempDir())
	wantError(t, r, isoURL, "AWS STS refused to issue credentials", "InvalidIdentityToken", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN")
	for _, leak := range []string{"revoked-token", "operation error", "no AWS credentials found"} {
		if strings.Contains(string(r.stderr), leak) {
			t.Errorf("the error shows %q:\n%s", leak, r.stderr)
		}
	}
}
