package origin

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sno-iso/sno-iso/internal/s3test"
)

const (
	testRoleARN     = "arn:aws:iam::123456789012:role/sno-iso"
	testSessionName = "sno-iso-test"
)

// webIdentity leaves the AWS SDK's default chain a web identity token file holding token
// and the role testRoleARN, exchanged at a fake STS on loopback (AWS_ENDPOINT_URL_STS) that
// grants grants for lifetime: no keys, profile, shared file, container credentials or
// instance metadata service. The options reach store st and trust both its CA and the STS's.
func webIdentity(t *testing.T, st *s3test.Store, token string, lifetime time.Duration, maxRequests int,
	grants map[string]s3test.Keys) (*s3test.STS, string, Options) {
	t.Helper()
	isolate(t)
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	tokenFile := filepath.Join(dir, "token")
	rotateToken(t, tokenFile, token)
	sts := s3test.StartSTS(t, testRoleARN, testSessionName, tokenFile, lifetime, maxRequests, grants)
	t.Setenv("AWS_REGION", s3test.Region)
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile)
	t.Setenv("AWS_ROLE_ARN", testRoleARN)
	t.Setenv("AWS_ROLE_SESSION_NAME", testSessionName)
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	opts := s3Options(st)
	opts.RootCAs = st.CAPool.Clone()
	opts.RootCAs.AddCert(sts.Server.Certificate())
	return sts, tokenFile, opts
}

// rotateToken replaces the token file's content at once, as the kubelet swaps a projected
// service account token in.
func rotateToken(t *testing.T, tokenFile, token string) {
	t.Helper()
	tmp := tokenFile + ".new"
	if err := os.WriteFile(tmp, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, tokenFile); err != nil {
		t.Fatal(err)
	}
}

// waitForRefresh returns once the credentials the STS handed out last are due for renewal:
// credentialsRefreshWindow before they expire.
func waitForRefresh(t *testing.T, sts *s3test.STS) {
	t.Helper()
	left := time.Until(sts.Expires().Add(-credentialsRefreshWindow))
	if left > time.Minute {
		t.Fatalf("the credentials are due for renewal in %v: not a short-lived grant", left)
	}
	time.Sleep(left + 50*time.Millisecond)
}

// shortLived is the lifetime of credentials due for renewal soon after they are handed out.
const shortLived = credentialsRefreshWindow + 3*time.Second

// signature is the credentials a request to the store was signed with.
type signature struct {
	KeyID, SessionToken string
	TokenSigned         bool // X-Amz-Security-Token is among the SignedHeaders
}

// signingProxy points opts at a TLS proxy on loopback in front of store st that records the
// signature of every GET, which the store does not judge whole: SeaweedFS checks a known
// key's signature and ignores the session token beside it (see s3test.STS).
func signingProxy(t *testing.T, st *s3test.Store, opts *Options) func() []signature {
	t.Helper()
	upstream, err := url.Parse(st.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	proxy.Transport = st.HTTPClient().Transport
	var mu sync.Mutex
	var seen []signature
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			auth := r.Header.Get("Authorization")
			_, cred, _ := strings.Cut(auth, "Credential=")
			keyID, _, _ := strings.Cut(cred, "/")
			_, signed, _ := strings.Cut(auth, "SignedHeaders=")
			signed, _, _ = strings.Cut(signed, ",")
			mu.Lock()
			seen = append(seen, signature{keyID, r.Header.Get("X-Amz-Security-Token"),
				slices.Contains(strings.Split(signed, ";"), "x-amz-security-token")})
			mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	opts.S3.Endpoint = srv.URL
	opts.RootCAs.AddCert(srv.Certificate())
	return func() []signature {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// wantSignedBy checks that there are GETs and each was signed with keys and a session token
// of the STS's.
func wantSignedBy(t *testing.T, gets []signature, keys s3test.Keys) {
	t.Helper()
	if len(gets) == 0 {
		t.Fatal("no GET reached the store")
	}
	for i, g := range gets {
		if g.KeyID != keys.AccessKeyID || !strings.HasPrefix(g.SessionToken, "session-token-") || !g.TokenSigned {
			t.Fatalf("GET %d of %d signed by %s with session token %q (signed %v), want %s and the STS's token",
				i+1, len(gets), g.KeyID, g.SessionToken, g.TokenSigned, keys.AccessKeyID)
		}
	}
}

// TestS3WebIdentity reads an object of a real S3 store (SeaweedFS over TLS) with credentials
// the SDK's default chain got for a web identity token (IRSA) from a fake STS: every request
// is signed with them, they are renewed with the token file's current token before they
// expire, and a token or role the STS refuses is ErrCredentialsRefused, at open and at a
// refresh.
func TestS3WebIdentity(t *testing.T) {
	st := s3test.Start(t)
	st.CreateBucket(t, "isos", false)
	data := randomBytes(300_000)
	st.Put(t, "isos", "rhcos/live.iso", data)
	const name = "s3://isos/rhcos/live.iso"
	ctx := context.Background()

	wantRange := func(t *testing.T, obj *Object, off, n int64) {
		t.Helper()
		body, err := obj.Range(ctx, off, n)
		if err != nil {
			t.Fatal(err)
		}
		defer body.Close()
		var got bytes.Buffer
		if _, err := body.CopyTo(&got, n); err != nil || !bytes.Equal(got.Bytes(), data[off:off+n]) {
			t.Fatalf("Range(%d, %d): %v, %d bytes, or not the object's", off, n, err, got.Len())
		}
	}

	t.Run("read with the role's credentials", func(t *testing.T) {
		sts, _, opts := webIdentity(t, st, "token-1", time.Hour, 2, map[string]s3test.Keys{"token-1": st.Session[0]})
		gets := signingProxy(t, st, &opts)
		obj, err := Open(ctx, name, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, obj); !bytes.Equal(got, data) {
			t.Fatal("the object read back differs from the one stored")
		}
		wantRange(t, obj, 1000, 200_000)
		if got := sts.Received(); !slices.Equal(got, []string{"token-1"}) {
			t.Errorf("the STS was sent %d tokens, want the file's one once for credentials valid an hour", len(got))
		}
		wantSignedBy(t, gets(), st.Session[0])
	})

	t.Run("renewed before expiry with the rotated token", func(t *testing.T) {
		// The first request due for renewal, before the credentials expire, asks the STS
		// again, with the token file read anew.
		sts, tokenFile, opts := webIdentity(t, st, "token-1", shortLived, 12,
			map[string]s3test.Keys{"token-1": st.Session[0], "token-2": st.Session[1]})
		gets := signingProxy(t, st, &opts)
		obj, err := Open(ctx, name, opts)
		if err != nil {
			t.Fatal(err)
		}
		wantRange(t, obj, 0, 100_000)
		wantSignedBy(t, gets(), st.Session[0])
		rotateToken(t, tokenFile, "token-2")
		waitForRefresh(t, sts)
		expires := sts.Expires()
		before := len(gets())
		wantRange(t, obj, 1000, 200_000)
		got := sts.Received()
		if len(got) < 2 || got[len(got)-1] != "token-2" || slices.Contains(got[:len(got)-1], "token-2") {
			t.Fatalf("the STS was sent %q, want token-1 until the rotation, then token-2 once its grant was due for renewal", got)
		}
		if !time.Now().Before(expires) {
			t.Errorf("the credentials were renewed after they expired at %v", expires)
		}
		if got := readAll(t, obj); !bytes.Equal(got, data) {
			t.Fatal("the object read back differs from the one stored")
		}
		wantSignedBy(t, gets()[before:], st.Session[1])
	})

	refused := func(t *testing.T, err error, code string) {
		t.Helper()
		if !errors.Is(err, ErrCredentialsRefused) || errors.Is(err, ErrNoCredentials) || !strings.Contains(err.Error(), code) {
			t.Fatalf("got %v, want ErrCredentialsRefused naming %s", err, code)
		}
		var oe *Error
		if !errors.As(err, &oe) || oe.Status != 0 || oe.URL != name {
			t.Fatalf("got %#v, want an *Error of %s without the STS's status: the store never answered", err, name)
		}
		if strings.Contains(err.Error(), "token-") {
			t.Fatalf("the error shows the token: %v", err)
		}
	}

	t.Run("token refused at open", func(t *testing.T) {
		// The SDK retries InvalidIdentityToken (its retryer's 3 attempts).
		sts, _, opts := webIdentity(t, st, "token-unknown", time.Hour, 3, map[string]s3test.Keys{"token-1": st.Session[0]})
		_, err := Open(ctx, name, opts)
		refused(t, err, "InvalidIdentityToken")
		if n := len(sts.Received()); n == 0 {
			t.Error("the STS was never asked")
		}
	})

	t.Run("role refused at open", func(t *testing.T) {
		sts, _, opts := webIdentity(t, st, "token-1", time.Hour, 1, map[string]s3test.Keys{"token-1": st.Session[0]})
		t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/another")
		_, err := Open(ctx, name, opts)
		refused(t, err, "AccessDenied")
		if n := len(sts.Received()); n != 1 {
			t.Errorf("the STS was asked %d times, want once", n)
		}
	})

	t.Run("token refused at a refresh", func(t *testing.T) {
		sts, tokenFile, opts := webIdentity(t, st, "token-1", shortLived, 12, map[string]s3test.Keys{"token-1": st.Session[0]})
		obj, err := Open(ctx, name, opts)
		if err != nil {
			t.Fatal(err)
		}
		client, err := NewS3Client(ctx, opts) // as download --upload's
		if err != nil {
			t.Fatal(err)
		}
		rotateToken(t, tokenFile, "token-revoked")
		waitForRefresh(t, sts)
		_, err = obj.Range(ctx, 0, 100)
		refused(t, err, "InvalidIdentityToken")
		if obj.Changed() {
			t.Error("a refused refresh marked the object changed")
		}
		_, err = client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("isos"), Key: aws.String("rhcos/live.iso")})
		if kind := S3ErrorKindOf(err); kind != ErrCredentialsRefused {
			t.Errorf("S3ErrorKindOf(%v) = %v, want ErrCredentialsRefused: STS's answer is not the store's", err, kind)
		}
	})
}
