package origin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
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
// grants grants: no keys, profile, shared file, container credentials or instance metadata
// service. The options reach store st and trust both its CA and the STS's.
func webIdentity(t *testing.T, st *s3test.Store, token string, maxRequests int,
	grants map[string]s3test.Grant) (*s3test.STS, string, Options) {
	t.Helper()
	isolate(t)
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	tokenFile := filepath.Join(dir, "token")
	rotateToken(t, tokenFile, token)
	sts := s3test.StartSTS(t, testRoleARN, testSessionName, tokenFile, maxRequests, grants)
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

// dueAtOnce is a grant of keys for less than credentialsRefreshWindow: due for renewal as
// soon as it is handed out, though valid for most of a minute, so that every request asks
// the STS again. hourLong is a grant of keys that is not due for renewal for the whole test.
func dueAtOnce(keys s3test.Keys) s3test.Grant {
	return s3test.Grant{Keys: keys, Lifetime: credentialsRefreshWindow - 10*time.Second}
}

func hourLong(keys s3test.Keys) s3test.Grant { return s3test.Grant{Keys: keys, Lifetime: time.Hour} }

// closedPort is a 127.0.0.1 address nothing listens on: connections to it are refused.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

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
// expire, a token or role the STS refuses is ErrCredentialsRefused, and an STS that fails or
// cannot be reached is ErrCredentialsUnavailable, at open and at a refresh.
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
	getObject := func(client *s3.Client) error {
		_, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("isos"), Key: aws.String("rhcos/live.iso")})
		return err
	}

	// openWithClient opens the object and makes a client as download --upload's, each with
	// credentials from the STS.
	openWithClient := func(t *testing.T, opts Options) (*Object, *s3.Client) {
		t.Helper()
		obj, err := Open(ctx, name, opts)
		if err != nil {
			t.Fatal(err)
		}
		client, err := NewS3Client(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		return obj, client
	}

	t.Run("read with the role's credentials", func(t *testing.T) {
		sts, _, opts := webIdentity(t, st, "token-1", 2, map[string]s3test.Grant{"token-1": hourLong(st.Session[0])})
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
		// token-1's grants are due for renewal at once, though valid for most of a minute:
		// each request asks the STS again. token-2's grant lives an hour: kept.
		sts, tokenFile, opts := webIdentity(t, st, "token-1", 12,
			map[string]s3test.Grant{"token-1": dueAtOnce(st.Session[0]), "token-2": hourLong(st.Session[1])})
		gets := signingProxy(t, st, &opts)
		obj, err := Open(ctx, name, opts)
		if err != nil {
			t.Fatal(err)
		}
		wantRange(t, obj, 0, 100_000)
		wantSignedBy(t, gets(), st.Session[0])
		renewals := len(sts.Received())
		if renewals < 2 {
			t.Fatalf("the STS was asked %d times for an open and a Range: credentials due for renewal were not renewed", renewals)
		}
		rotateToken(t, tokenFile, "token-2")
		before := len(gets())
		wantRange(t, obj, 1000, 200_000)
		if got := readAll(t, obj); !bytes.Equal(got, data) {
			t.Fatal("the object read back differs from the one stored")
		}
		want := append(slices.Repeat([]string{"token-1"}, renewals), "token-2")
		if got := sts.Received(); !slices.Equal(got, want) {
			t.Fatalf("the STS was sent %q, want token-1 until the rotation, then token-2 once for its hour-long grant", got)
		}
		wantSignedBy(t, gets()[before:], st.Session[1])
	})

	// wantOriginError checks that err is an *Error of name without a status (the store never
	// answered), with kind and the STS's code or transport error, and neither the other STS
	// kind, nor ErrNoCredentials, nor the token.
	wantOriginError := func(t *testing.T, err error, kind error, says string) {
		t.Helper()
		other := map[error]error{ErrCredentialsRefused: ErrCredentialsUnavailable, ErrCredentialsUnavailable: ErrCredentialsRefused}[kind]
		if !errors.Is(err, kind) || errors.Is(err, other) || errors.Is(err, ErrNoCredentials) || !strings.Contains(err.Error(), says) {
			t.Fatalf("got %v, want %v saying %s", err, kind, says)
		}
		var oe *Error
		if !errors.As(err, &oe) || oe.Status != 0 || oe.URL != name {
			t.Fatalf("got %#v, want an *Error of %s without the STS's status: the store never answered", err, name)
		}
		if strings.Contains(err.Error(), "token-") {
			t.Fatalf("the error shows the token: %v", err)
		}
	}
	// wantKindOf checks what S3ErrorKindOf makes of an S3 client's error (download --upload's):
	// the STS's failure, whole, without the SDK's chain of calls.
	wantKindOf := func(t *testing.T, err error, kind error, says string) {
		t.Helper()
		got := S3ErrorKindOf(err)
		if !errors.Is(got, kind) || !strings.Contains(got.Error(), says) || strings.Contains(got.Error(), "operation error S3") {
			t.Errorf("S3ErrorKindOf(%v) = %v, want %v saying %s: STS's answer is not the store's", err, got, kind, says)
		}
	}

	t.Run("token refused at open", func(t *testing.T) {
		// The SDK retries InvalidIdentityToken (its retryer's 3 attempts).
		sts, _, opts := webIdentity(t, st, "token-unknown", 3, map[string]s3test.Grant{"token-1": hourLong(st.Session[0])})
		_, err := Open(ctx, name, opts)
		wantOriginError(t, err, ErrCredentialsRefused, "InvalidIdentityToken")
		if n := len(sts.Received()); n == 0 {
			t.Error("the STS was never asked")
		}
	})

	t.Run("role refused at open", func(t *testing.T) {
		sts, _, opts := webIdentity(t, st, "token-1", 1, map[string]s3test.Grant{"token-1": hourLong(st.Session[0])})
		t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/another")
		_, err := Open(ctx, name, opts)
		wantOriginError(t, err, ErrCredentialsRefused, "AccessDenied")
		if n := len(sts.Received()); n != 1 {
			t.Errorf("the STS was asked %d times, want once", n)
		}
	})

	t.Run("token refused at a refresh", func(t *testing.T) {
		sts, tokenFile, opts := webIdentity(t, st, "token-1", 16, map[string]s3test.Grant{"token-1": dueAtOnce(st.Session[0])})
		obj, client := openWithClient(t, opts)
		rotateToken(t, tokenFile, "token-revoked")
		_, err := obj.Range(ctx, 0, 100)
		wantOriginError(t, err, ErrCredentialsRefused, "InvalidIdentityToken")
		if obj.Changed() {
			t.Error("a refused refresh marked the object changed")
		}
		wantKindOf(t, getObject(client), ErrCredentialsRefused, "InvalidIdentityToken")
		if got := sts.Received(); got[len(got)-1] != "token-revoked" {
			t.Errorf("the STS was sent %q, want the revoked token last", got)
		}
	})

	// The STS client's retryer makes 3 attempts for throttling, 5xx answers and
	// IDPCommunicationError (aws-sdk-go-v2/service/sts adds that code). At a refresh, the S3
	// client's retryer makes 3 attempts of a GetObject whose credentials failed with a
	// retryable status as well: 9 requests to the STS. Throttling backs off for seconds: it
	// is checked at open only.
	for _, failure := range []struct {
		status            int
		code              string
		atOpen, atRefresh int
	}{
		{http.StatusServiceUnavailable, "ServiceUnavailable", 3, 9},
		{http.StatusInternalServerError, "InternalFailure", 3, 9},
		{http.StatusBadRequest, "IDPCommunicationError", 3, 3},
		{http.StatusBadRequest, "Throttling", 3, 0},
	} {
		t.Run(fmt.Sprintf("STS answering %d %s", failure.status, failure.code), func(t *testing.T) {
			sts, _, opts := webIdentity(t, st, "token-1", 32, map[string]s3test.Grant{"token-1": dueAtOnce(st.Session[0])})
			opts.IdleTimeout = 30 * time.Second // the SDK's back-off between attempts is no idle store
			wantAttempts := func(t *testing.T, before, attempts int) {
				t.Helper()
				if n := len(sts.Received()) - before; n != attempts {
					t.Errorf("the STS was asked %d times, want the SDK's %d attempts", n, attempts)
				}
			}
			sts.Fail(failure.status, failure.code)
			_, err := Open(ctx, name, opts)
			wantOriginError(t, err, ErrCredentialsUnavailable, failure.code)
			wantAttempts(t, 0, failure.atOpen)
			if failure.atRefresh == 0 {
				return
			}

			// Once STS answers again, so does the origin (serve keeps trying); then at a
			// refresh the same failure is the same error.
			sts.Fail(0, "")
			obj, client := openWithClient(t, opts)
			sts.Fail(failure.status, failure.code)
			before := len(sts.Received())
			_, err = obj.Range(ctx, 0, 100)
			wantOriginError(t, err, ErrCredentialsUnavailable, failure.code)
			wantAttempts(t, before, failure.atRefresh)
			before = len(sts.Received())
			wantKindOf(t, getObject(client), ErrCredentialsUnavailable, failure.code)
			wantAttempts(t, before, failure.atRefresh)
		})
	}

	t.Run("STS unreachable at open", func(t *testing.T) {
		_, _, opts := webIdentity(t, st, "token-1", 1, map[string]s3test.Grant{"token-1": hourLong(st.Session[0])})
		t.Setenv("AWS_ENDPOINT_URL_STS", "https://"+closedPort(t))
		_, err := Open(ctx, name, opts)
		wantOriginError(t, err, ErrCredentialsUnavailable, "connection refused")
	})

	t.Run("STS unreachable at a refresh", func(t *testing.T) {
		sts, _, opts := webIdentity(t, st, "token-1", 12, map[string]s3test.Grant{"token-1": dueAtOnce(st.Session[0])})
		obj, client := openWithClient(t, opts)
		sts.Server.Close()
		_, err := obj.Range(ctx, 0, 100)
		wantOriginError(t, err, ErrCredentialsUnavailable, "connection refused")
		wantKindOf(t, getObject(client), ErrCredentialsUnavailable, "connection refused")
	})
}
