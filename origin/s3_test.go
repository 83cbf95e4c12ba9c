package origin

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sno-iso/sno-iso/internal/s3test"
)

// The tests below read from a real S3 store (SeaweedFS on loopback, over TLS with the test's
// own CA) with the AWS SDK's default chain: they set the process's environment, so none is
// parallel.

// s3Options reach store st by options alone: endpoint, path-style, its CA.
func s3Options(st *s3test.Store) Options {
	opts := smallOptions()
	opts.RootCAs = st.CAPool
	opts.S3 = S3Options{Endpoint: st.Endpoint, PathStyle: true}
	return opts
}

// isolate clears every AWS setting of the environment: only what a test sets counts.
func isolate(t *testing.T) {
	for _, kv := range s3test.IsolatedEnv(t.TempDir()) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL_S3", "AWS_CA_BUNDLE"} {
		t.Setenv(k, "")
	}
}

// readAll reads the whole object with ReadAt calls of every size: cached and streamed.
func readAll(t *testing.T, obj *Object) []byte {
	t.Helper()
	out := make([]byte, obj.Size())
	r := rand.New(rand.NewPCG(5, 6))
	for off := int64(0); off < obj.Size(); {
		n := min(int64(1+r.IntN(6*4096)), obj.Size()-off)
		if r.IntN(4) == 0 {
			n = min(64<<10, obj.Size()-off) // longer than 4 blocks: one Range GET
		}
		if _, err := obj.ReadAt(out[off:off+n], off); err != nil && !(err == io.EOF && off+n == obj.Size()) {
			t.Fatalf("ReadAt(%d bytes at %d): %v", n, off, err)
		}
		off += n
	}
	return out
}

func TestS3Origin(t *testing.T) {
	st := s3test.Start(t)
	st.CreateBucket(t, "isos", false)
	st.CreateBucket(t, "versioned", true)
	v1 := randomBytes(300_000)
	st.Put(t, "isos", "rhcos/live.iso", v1)
	ctx := context.Background()

	t.Run("options", func(t *testing.T) {
		isolate(t)
		t.Setenv("AWS_ACCESS_KEY_ID", st.ReadOnly.AccessKeyID)
		t.Setenv("AWS_SECRET_ACCESS_KEY", st.ReadOnly.SecretAccessKey)
		obj, err := Open(ctx, "s3://isos/rhcos/live.iso", s3Options(st))
		if err != nil {
			t.Fatal(err)
		}
		if obj.Size() != int64(len(v1)) || obj.ETag() == "" || obj.String() != "s3://isos/rhcos/live.iso" {
			t.Fatalf("size %d, ETag %q, name %s", obj.Size(), obj.ETag(), obj)
		}
		if got := readAll(t, obj); !bytes.Equal(got, v1) {
			t.Fatal("the object read back differs from the one stored")
		}
		body, err := obj.Range(ctx, 1000, 200_000)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if _, err := body.CopyTo(&got, 200_000); err != nil || !bytes.Equal(got.Bytes(), v1[1000:201_000]) {
			t.Fatalf("Range: %v, %d bytes", err, got.Len())
		}
		body.Close()
	})

	t.Run("environment", func(t *testing.T) {
		// Endpoint (AWS_ENDPOINT_URL_S3), region and CA bundle from the environment.
		isolate(t)
		st.Setenv(t, st.ReadOnly)
		opts := smallOptions()
		opts.S3.PathStyle = true
		obj, err := Open(ctx, "s3://isos/rhcos/live.iso", opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, obj); !bytes.Equal(got, v1) {
			t.Fatal("the object read back differs from the one stored")
		}
	})

	t.Run("shared credentials file with a profile", func(t *testing.T) {
		isolate(t)
		creds := filepath.Join(t.TempDir(), "credentials")
		content := fmt.Sprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n\n[fleet]\naws_access_key_id = %s\naws_secret_access_key = %s\n",
			st.Wrong.AccessKeyID, st.Wrong.SecretAccessKey, st.ReadOnly.AccessKeyID, st.ReadOnly.SecretAccessKey)
		if err := os.WriteFile(creds, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
		if _, err := Open(ctx, "s3://isos/rhcos/live.iso", s3Options(st)); !errors.Is(err, ErrAccessDenied) {
			t.Fatalf("the default profile's unknown keys: %v, want ErrAccessDenied", err)
		}
		t.Setenv("AWS_PROFILE", "fleet")
		obj, err := Open(ctx, "s3://isos/rhcos/live.iso", s3Options(st))
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, obj); !bytes.Equal(got, v1) {
			t.Fatal("the object read back differs from the one stored")
		}
	})

	t.Run("container credentials, renewed before expiry", func(t *testing.T) {
		// The ECS/EKS Pod Identity agent's protocol: GET the full URI with the token file's
		// contents as Authorization, JSON credentials with an expiry back. The SDK renews
		// them 5 minutes before that expiry (config's container provider), a window
		// NewS3Client keeps: the first grant, for 4 minutes, is due for renewal at once,
		// so the open's request asks again; the next, for an hour, is kept.
		isolate(t)
		var served atomic.Int64
		agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "pod-token" {
				http.Error(w, "bad token", http.StatusUnauthorized)
				return
			}
			expiry := time.Now().Add(time.Hour)
			switch n := served.Add(1); {
			case n == 1:
				expiry = time.Now().Add(4 * time.Minute)
			case n > 4:
				t.Errorf("the agent was asked %d times", n)
				http.Error(w, "too many requests for this test", http.StatusServiceUnavailable)
				return
			}
			json.NewEncoder(w).Encode(map[string]string{
				"AccessKeyId": st.ReadOnly.AccessKeyID, "SecretAccessKey": st.ReadOnly.SecretAccessKey,
				"Expiration": expiry.UTC().Format(time.RFC3339),
			})
		}))
		defer agent.Close()
		token := filepath.Join(t.TempDir(), "token")
		os.WriteFile(token, []byte("pod-token"), 0o600)
		t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", agent.URL+"/v1/credentials")
		t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token)
		obj, err := Open(ctx, "s3://isos/rhcos/live.iso", s3Options(st))
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, obj); !bytes.Equal(got, v1) {
			t.Fatal("the object read back differs from the one stored")
		}
		if n := served.Load(); n != 2 {
			t.Errorf("the agent was asked %d times, want twice: for the open, then once for the grant due for renewal", n)
		}
	})

	t.Run("instance credentials, IMDSv2", func(t *testing.T) {
		// The EC2 instance metadata service as an instance that requires IMDSv2 answers (the
		// EC2 user guide, "Use IMDSv2"): a session token from PUT /latest/api/token, its TTL
		// in the answer's header, given in every GET or refused with 401; the role's name,
		// then its credentials as JSON.
		isolate(t)
		const role, sessionToken = "sno-iso-node", "imds-session-token"
		var tokens, credentials, requests atomic.Int64
		imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if requests.Add(1) > 20 {
				t.Errorf("the metadata service was asked %d times", requests.Load())
				http.Error(w, "too many requests for this test", http.StatusServiceUnavailable)
				return
			}
			if r.Method == http.MethodPut && r.URL.Path == "/latest/api/token" {
				if r.Header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds") == "" {
					http.Error(w, "missing TTL", http.StatusBadRequest)
					return
				}
				tokens.Add(1)
				// The service says how long the token lives; the SDK needs it to use the token.
				w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", r.Header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds"))
				io.WriteString(w, sessionToken)
				return
			}
			if r.Method != http.MethodGet || r.Header.Get("X-Aws-Ec2-Metadata-Token") != sessionToken {
				http.Error(w, "", http.StatusUnauthorized)
				return
			}
			switch r.URL.Path {
			case "/latest/meta-data/iam/security-credentials/":
				io.WriteString(w, role)
			case "/latest/meta-data/iam/security-credentials/" + role:
				credentials.Add(1)
				json.NewEncoder(w).Encode(map[string]string{
					"Code": "Success", "Type": "AWS-HMAC", "LastUpdated": time.Now().UTC().Format(time.RFC3339),
					"AccessKeyId": st.ReadOnly.AccessKeyID, "SecretAccessKey": st.ReadOnly.SecretAccessKey,
					"Token": "instance-role-session", "Expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
				})
			default:
				// Paths this service does not model (the extended credentials path of newer
				// SDKs) are missing, as on instances that predate them: the SDK falls back.
				http.NotFound(w, r)
			}
		}))
		defer imds.Close()
		t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
		t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
		obj, err := Open(ctx, "s3://isos/rhcos/live.iso", s3Options(st))
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, obj); !bytes.Equal(got, v1) {
			t.Fatal("the object read back differs from the one stored")
		}
		if tokens.Load() == 0 || credentials.Load() == 0 {
			t.Errorf("the metadata service issued %d session tokens and %d credentials: the chain did not use IMDSv2",
				tokens.Load(), credentials.Load())
		}
	})

	for _, versioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("replaced object, versioning %v", versioned), func(t *testing.T) {
			isolate(t)
			st.Setenv(t, st.ReadOnly)
			bucket := map[bool]string{false: "isos", true: "versioned"}[versioned]
			old, next := randomBytes(200_000), bytes.Repeat([]byte{7}, 200_000)
			st.Put(t, bucket, "replaced.iso", old)
			obj, err := Open(ctx, "s3://"+bucket+"/replaced.iso", s3Options(st))
			if err != nil {
				t.Fatal(err)
			}
			body, err := obj.Range(ctx, 0, 150_000)
			if err != nil {
				t.Fatal(err)
			}
			defer body.Close()
			st.Put(t, bucket, "replaced.iso", next)
			// A read of the opened version now fails; the stream opened before the
			// replacement ends with the old version's bytes or an error, never the new ones.
			if _, err := obj.ReadAt(make([]byte, 10), 100_000); !errors.Is(err, ErrChanged) || !obj.Changed() {
				t.Fatalf("read after the replacement: %v (Changed %v), want ErrChanged", err, obj.Changed())
			}
			var got bytes.Buffer
			if _, err := body.CopyTo(&got, 150_000); err == nil && !bytes.Equal(got.Bytes(), old[:150_000]) {
				t.Fatal("a stream of the opened version delivered other bytes")
			}
			again, err := Open(ctx, "s3://"+bucket+"/replaced.iso", s3Options(st))
			if err != nil {
				t.Fatal(err)
			}
			if again.ETag() == obj.ETag() || !bytes.Equal(readAll(t, again), next) {
				t.Fatalf("reopened: ETag %s (was %s), or other bytes than the new version's", again.ETag(), obj.ETag())
			}
		})
	}

	t.Run("keys with URL characters", func(t *testing.T) {
		// The key is what follows the bucket, as written: each of these names its own object,
		// beside a decoy at the key an URL reading would take.
		isolate(t)
		st.Setenv(t, st.ReadOnly)
		st.Put(t, "isos", "x", []byte("decoy: the key before '#' or '?'"))
		st.Put(t, "isos", "a b.iso", []byte("decoy: the key %20 decodes to"))
		for i, key := range []string{"x#1.iso", "x?y.iso", "a%20b.iso", "100%.iso", "dir/a b.iso", "%zz#?&=+.iso"} {
			want := bytes.Repeat([]byte{byte('a' + i)}, 5000+i)
			st.Put(t, "isos", key, want)
			obj, err := Open(ctx, "s3://isos/"+key, s3Options(st))
			if err != nil {
				t.Fatalf("%q: %v", key, err)
			}
			if obj.String() != "s3://isos/"+key || !bytes.Equal(readAll(t, obj), want) {
				t.Fatalf("s3://isos/%s (shown as %s) read another object than the key %q", key, obj, key)
			}
		}
	})

	t.Run("AWS_CA_BUNDLE beside RootCAs leaves the caller's pool alone", func(t *testing.T) {
		// The SDK appends the bundle into the transport's pool; serve passes the same options
		// to every attempt.
		isolate(t)
		st.Setenv(t, st.ReadOnly) // AWS_CA_BUNDLE is the store's CA
		other := httptest.NewTLSServer(http.NotFoundHandler())
		other.Close()
		roots := x509.NewCertPool()
		roots.AddCert(other.Certificate())
		before := roots.Clone()
		opts := s3Options(st)
		opts.RootCAs = roots
		for range 2 {
			obj, err := Open(ctx, "s3://isos/rhcos/live.iso", opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, obj); !bytes.Equal(got, v1) {
				t.Fatal("the object read back differs from the one stored")
			}
		}
		if !roots.Equal(before) {
			t.Fatal("opening with AWS_CA_BUNDLE changed the caller's Options.RootCAs")
		}
	})

	t.Run("If-Range", func(t *testing.T) {
		// S3 lacks If-Range: an ETag pins the range; a date cannot (If-Unmodified-Since would
		// pass for a later version too), so it gets the whole object.
		isolate(t)
		st.Setenv(t, st.ReadOnly)
		client, err := NewS3Client(ctx, s3Options(st))
		if err != nil {
			t.Fatal(err)
		}
		hc := &http.Client{Transport: S3RoundTripper(client)}
		get := func(ifRange string) (*http.Response, []byte) {
			t.Helper()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "s3://isos/rhcos/live.iso", nil)
			req.Header.Set("Range", "bytes=10-19")
			if ifRange != "" {
				req.Header.Set("If-Range", ifRange)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return resp, body
		}
		first, _ := get("")
		etag, lastModified := first.Header.Get("ETag"), first.Header.Get("Last-Modified")
		if resp, body := get(etag); resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, v1[10:20]) {
			t.Errorf("If-Range with the ETag: %d, %d bytes, want the 10 bytes of the range", resp.StatusCode, len(body))
		}
		if resp, body := get(`"other"`); resp.StatusCode != http.StatusOK || !bytes.Equal(body, v1) {
			t.Errorf("If-Range with another ETag: %d, %d bytes, want the whole object", resp.StatusCode, len(body))
		}
		lm, err := http.ParseTime(lastModified)
		if err != nil {
			t.Fatalf("Last-Modified %q: %v", lastModified, err)
		}
		later := lm.Add(time.Hour).Format(http.TimeFormat)
		for _, date := range []string{lastModified, later} {
			if resp, body := get(date); resp.StatusCode != http.StatusOK || !bytes.Equal(body, v1) {
				t.Errorf("If-Range: %s (Last-Modified %s): %d, %d bytes, want the whole object", date, lastModified, resp.StatusCode, len(body))
			}
		}
	})

	t.Run("errors", func(t *testing.T) {
		isolate(t)
		st.Setenv(t, st.Wrong)
		_, err := Open(ctx, "s3://isos/rhcos/live.iso", s3Options(st))
		var oe *Error
		if !errors.Is(err, ErrBadCredentials) || !errors.Is(err, ErrAccessDenied) || !errors.As(err, &oe) || oe.Status != http.StatusForbidden {
			t.Fatalf("unknown keys: %v, want ErrBadCredentials (an ErrAccessDenied) with status 403", err)
		}
		if strings.Contains(err.Error(), st.Wrong.SecretAccessKey) || strings.Contains(err.Error(), "Signature=") {
			t.Fatalf("the error shows a secret: %v", err)
		}
		t.Setenv("AWS_SECRET_ACCESS_KEY", st.ReadOnly.SecretAccessKey+"x")
		t.Setenv("AWS_ACCESS_KEY_ID", st.ReadOnly.AccessKeyID)
		if _, err := Open(ctx, "s3://isos/rhcos/live.iso", s3Options(st)); !errors.Is(err, ErrAccessDenied) {
			t.Fatalf("a wrong secret: %v, want ErrAccessDenied", err)
		}
		st.Setenv(t, st.ReadOnly)
		for _, name := range []string{"s3://isos/missing.iso", "s3://nobucket/rhcos/live.iso"} {
			_, err := Open(ctx, name, s3Options(st))
			if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrNoSuchBucket) != strings.Contains(name, "nobucket") {
				t.Errorf("%s: %v, want ErrNotFound, and ErrNoSuchBucket for the missing bucket only", name, err)
			}
		}
		plain := s3Options(st)
		plain.RootCAs = nil
		t.Setenv("AWS_CA_BUNDLE", "")
		if _, err := Open(ctx, "s3://isos/rhcos/live.iso", plain); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("without the store's CA: %v, want a certificate error", err)
		}
		isolate(t)
		if _, err := Open(ctx, "s3://isos/rhcos/live.iso", s3Options(st)); !errors.Is(err, ErrNoCredentials) {
			t.Errorf("no credentials anywhere: %v, want ErrNoCredentials", err)
		}
	})
}

// TestS3StoreStoppedMidStream: a store that goes away fails the stream in flight and every
// read after it with an error, never a hang or short data; the same Object reads again once
// the store is back.
func TestS3StoreStoppedMidStream(t *testing.T) {
	st := s3test.Start(t)
	st.CreateBucket(t, "isos", false)
	data := randomBytes(6 << 20)
	st.Put(t, "isos", "big.iso", data)
	isolate(t)
	st.Setenv(t, st.ReadOnly)
	opts := s3Options(st)
	opts.IdleTimeout = 3 * time.Second
	ctx := context.Background()
	obj, err := Open(ctx, "s3://isos/big.iso", opts)
	if err != nil {
		t.Fatal(err)
	}
	body, err := obj.Range(ctx, 0, obj.Size())
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 64<<10)
	if _, err := io.ReadFull(body, head); err != nil || !bytes.Equal(head, data[:len(head)]) {
		t.Fatalf("first bytes: %v", err)
	}
	st.Stop()
	var rest bytes.Buffer
	_, err = body.CopyTo(&rest, obj.Size()-int64(len(head)))
	body.Close()
	var oe *Error
	if !errors.As(err, &oe) {
		t.Fatalf("the stream across the store's stop ended with %v after %d bytes, want an *Error", err, rest.Len())
	}
	if !bytes.Equal(rest.Bytes(), data[len(head):len(head)+rest.Len()]) {
		t.Fatal("the bytes before the failure are not the object's")
	}
	if _, err := obj.ReadAt(make([]byte, 10), 3<<20); !errors.As(err, &oe) || obj.Changed() {
		t.Fatalf("a read while the store is down: %v (Changed %v), want an *Error that is not a change", err, obj.Changed())
	}
	st.Restart(t)
	if got := readAll(t, obj); !bytes.Equal(got, data) {
		t.Fatal("after the store came back, the object read differs from the one stored")
	}
}

// FuzzParseS3URL: what ParseS3URL accepts is exactly s3://BUCKET/KEY with both parts, the
// bucket without a slash, and the two parts make up the input again.
func FuzzParseS3URL(f *testing.F) {
	for _, s := range []string{"s3://b/k", "s3://isos/rhcos/live.iso", "s3://b/", "s3:///k", "s3://b", "https://x/y", "s3://b//k?x=1#y",
		"s3://b/100%.iso", "s3://b/a%20b c.iso"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		bucket, key, err := ParseS3URL(name)
		if err != nil {
			if !errors.Is(err, ErrNotHTTP) {
				t.Fatalf("%q: error %v is not ErrNotHTTP", name, err)
			}
			return
		}
		if bucket == "" || key == "" || strings.Contains(bucket, "/") || "s3://"+bucket+"/"+key != name || !IsS3(name) {
			t.Fatalf("%q split into bucket %q and key %q", name, bucket, key)
		}
		// The request URL carries the key back unchanged, with no query or fragment split off.
		reqURL, err := S3RequestURL(name)
		if err != nil {
			if !errors.Is(err, ErrNotHTTP) {
				t.Fatalf("%q: request URL error %v is not ErrNotHTTP", name, err)
			}
			return // a bucket that is no URL host
		}
		u, err := url.Parse(reqURL)
		if err != nil || u.Scheme != "s3" || u.Host != bucket || u.Path != "/"+key || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("%q: request URL %q parses to %+v (%v), want bucket %q and key %q", name, reqURL, u, err, bucket, key)
		}
	})
}

// TestS3WrongRegion: AWS answers a request signed for another region than the bucket's with
// 301 PermanentRedirect, naming the bucket's region in x-amz-bucket-region and no Location
// (as its S3 error documentation describes); the error names that region.
func TestS3WrongRegion(t *testing.T) {
	isolate(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	endpoint, requests := s3test.WrongRegion(t, "eu-west-1")
	opts := smallOptions()
	opts.S3 = S3Options{Endpoint: endpoint, PathStyle: true, Region: "us-east-1"}
	_, err := Open(context.Background(), "s3://isos/rhcos/live.iso", opts)
	var oe *Error
	if !errors.Is(err, ErrWrongRegion) || !strings.Contains(err.Error(), "eu-west-1") || !errors.As(err, &oe) || oe.Status != 301 {
		t.Fatalf("got %v, want ErrWrongRegion naming eu-west-1 with status 301", err)
	}
	if strings.Contains(err.Error(), "wJalrXUtnFEMI") {
		t.Fatalf("the error shows the secret key: %v", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests for an answer that cannot change, want 1", n)
	}
}

// TestS3ClientSendsNoChecksumUnlessRequired: the client's PutObject (and so the uploads of
// download --upload) carries no SDK checksum: older Ceph RGW, NooBaa/MCG and MinIO answer
// one (an x-amz-checksum-crc32 header, or a trailer in an aws-chunked body) with an error.
func TestS3ClientSendsNoChecksumUnlessRequired(t *testing.T) {
	isolate(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	var requests atomic.Int64
	headers := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			headers <- r.Header.Clone()
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
	}))
	defer srv.Close()
	opts := smallOptions()
	opts.S3 = S3Options{Endpoint: srv.URL, PathStyle: true, Region: "us-east-1"}
	client, err := NewS3Client(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("isos"), Key: aws.String("live.iso"),
		Body: bytes.NewReader([]byte("iso bytes"))})
	if err != nil {
		t.Fatal(err)
	}
	h := <-headers
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "x-amz-checksum-") || strings.EqualFold(name, "X-Amz-Trailer") ||
			strings.EqualFold(name, "X-Amz-Sdk-Checksum-Algorithm") {
			t.Errorf("PutObject sent %s: %q", name, h.Values(name))
		}
	}
	if ce := h.Get("Content-Encoding"); strings.Contains(ce, "aws-chunked") {
		t.Errorf("PutObject sent an aws-chunked body (Content-Encoding %q)", ce)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want the 1 PutObject", n)
	}
}
