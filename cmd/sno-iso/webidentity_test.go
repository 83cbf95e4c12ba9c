package main

import (
	"context"
	"crypto/rand"
	"encoding/pem"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sno-iso/sno-iso/internal/s3test"
	"github.com/sno-iso/sno-iso/origin"
)

// TestS3WebIdentitySource: with only a web identity token file and a role in the environment
// (IRSA), download --url s3:// reads the object of a real S3 store (SeaweedFS over TLS) with
// the credentials a fake STS on loopback granted for the token; a token the STS refuses is an
// error that names the token file and the role, an STS that fails or cannot be reached one
// that names the STS endpoint settings, not the SDK's chain of calls.
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
	sts := s3test.StartSTS(t, roleARN, "sno-iso-pod", tokenFile, 8,
		map[string]s3test.Grant{"pod-token": {Keys: st.Session[0], Lifetime: time.Hour}})
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
	wantClean := func(r result) {
		t.Helper()
		for _, leak := range []string{"revoked-token", "operation error", "no AWS credentials found"} {
			if strings.Contains(string(r.stderr), leak) {
				t.Errorf("the error shows %q:\n%s", leak, r.stderr)
			}
		}
	}
	r = download(t.TempDir())
	wantError(t, r, isoURL, "AWS STS refused to issue credentials", "InvalidIdentityToken", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN")
	wantClean(r)

	// The SDK makes 3 attempts of a 503: 7 requests in all, within StartSTS's bound.
	sts.Fail(http.StatusServiceUnavailable, "ServiceUnavailable")
	r = download(t.TempDir())
	wantError(t, r, isoURL, "AWS STS did not issue credentials (ServiceUnavailable", "AWS_ENDPOINT_URL_STS", "sts.REGION.amazonaws.com")
	wantClean(r)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	env = append(env, "AWS_ENDPOINT_URL_STS=https://"+closed)
	r = download(t.TempDir())
	wantError(t, r, isoURL, "AWS STS did not issue credentials (no answer from STS", "connection refused", "AWS_ENDPOINT_URL_STS")
	wantClean(r)
}

// TestS3WebIdentityUploadAdvice: what download --upload says when the STS refuses or fails
// to renew the web identity credentials of its S3 client at a PutObject: STS's error code
// and message with the advice, as the download says them, not the SDK's chain of calls.
func TestS3WebIdentityUploadAdvice(t *testing.T) {
	st := s3test.Start(t)
	st.CreateBucket(t, "isos", false)
	dir := t.TempDir()
	for _, kv := range append(s3test.IsolatedEnv(dir), "HOME="+dir, "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_CA_BUNDLE=",
		"AWS_ENDPOINT_URL_S3=", "AWS_REGION="+s3test.Region) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("pod-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Credentials for 50 s are due for renewal at once (origin renews them a minute before
	// they expire): the PutObject asks the STS again.
	const roleARN = "arn:aws:iam::123456789012:role/sno-iso"
	sts := s3test.StartSTS(t, roleARN, "sno-iso-pod", tokenFile, 16,
		map[string]s3test.Grant{"pod-token": {Keys: st.Session[0], Lifetime: 50 * time.Second}})
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile)
	t.Setenv("AWS_ROLE_ARN", roleARN)
	t.Setenv("AWS_ROLE_SESSION_NAME", "sno-iso-pod")
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	opts := origin.Options{RootCAs: st.CAPool.Clone(), S3: origin.S3Options{Endpoint: st.Endpoint, PathStyle: true}}
	opts.RootCAs.AddCert(sts.Server.Certificate())
	target := uploadTarget{bucket: "isos", key: "rhcos/live.iso"}
	// put is uploadAdvice's text for the error of a PutObject by a client that got its
	// credentials before fail.
	put := func(fail func()) string {
		t.Helper()
		client, err := origin.NewS3Client(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		fail()
		_, err = client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &target.bucket, Key: &target.key,
			Body: strings.NewReader("iso")})
		if err == nil {
			t.Fatal("PutObject succeeded")
		}
		return errorText(uploadAdvice(err, target))
	}
	wantText := func(text string, wants ...string) {
		t.Helper()
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%q does not say %q", text, want)
			}
		}
		for _, leak := range []string{"operation error", "pod-token", "revoked-token"} {
			if strings.Contains(text, leak) {
				t.Errorf("%q shows %q", text, leak)
			}
		}
	}

	text := put(func() {
		if err := os.WriteFile(tokenFile, []byte("revoked-token"), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	wantText(text, "--upload s3://isos/rhcos/live.iso: AWS STS refused to issue credentials (InvalidIdentityToken: ",
		credentialsRefusedAdvice)

	if err := os.WriteFile(tokenFile, []byte("pod-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	text = put(func() { sts.Fail(http.StatusServiceUnavailable, "ServiceUnavailable") })
	wantText(text, "--upload s3://isos/rhcos/live.iso: AWS STS did not issue credentials (ServiceUnavailable: ",
		"AWS_ENDPOINT_URL_STS")
}
