package download

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// An endless chunked body (no length declared) is cut at MaxSize and its part removed, not
// left to fill the filesystem.
func TestFetchBoundsABodyOfUnknownLength(t *testing.T) {
	chunk := make([]byte, 64<<10)
	o := newOrigin(t, 1, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		for i := 0; i < 1024 && r.Context().Err() == nil; i++ { // 64 MiB at most, the bound of the test
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	f := quickFetcher(nil)
	f.MaxSize = 1 << 20
	part := partIn(t)
	err := f.Fetch(testContext(t), Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(nil)}, part)
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != f.MaxSize {
		t.Fatalf("got %v, want a TooLargeError at %d bytes", err, f.MaxSize)
	}
	mustNotExist(t, part.Path)
	if n := len(o.seen()); n != 1 {
		t.Errorf("%d requests, want 1: a body over the bound is not retried", n)
	}
}

// A 206 whose chunked body runs past the complete length its Content-Range declared is an
// error: the bytes after it are not the file's.
func TestFetchRefusesABodyLongerThanDeclared(t *testing.T) {
	data := testBytes(1<<20, 30)
	o := newOrigin(t, 1, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Range", "bytes 0-"+strconv.Itoa(len(data)-1)+"/"+strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusPartialContent) // no Content-Length: chunked
		w.Write(data)
		w.Write(data)
	})
	part := partIn(t)
	err := quickFetcher(nil).Fetch(testContext(t), Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(data)}, part)
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != int64(len(data)) {
		t.Fatalf("got %v, want a TooLargeError at the declared %d bytes", err, len(data))
	}
	mustNotExist(t, part.Path)
}

// A server that declares the whole length, sends part of it and ignores Range sends the same
// first bytes again and again: that is no progress, and the retries run out.
func TestFetchGivesUpOnAServerThatCutsAndIgnoresRange(t *testing.T) {
	data := testBytes(1<<20, 31)
	f := quickFetcher(nil)
	o := newOrigin(t, f.Retries+2, func(_ int, w http.ResponseWriter, r *http.Request) {
		cutAt(w, data, len(data)/2, `"v1"`)
	})
	err := f.Fetch(testContext(t), Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(data)}, partIn(t))
	if err == nil || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("got %v, want the retries to run out", err)
	}
	if n := len(o.seen()); n != f.Retries+1 {
		t.Errorf("%d requests, want %d", n, f.Retries+1)
	}
}

// trustingFetcher is a quick Fetcher that trusts the certificate of the https server s.
func trustingFetcher(t *testing.T, s *httptest.Server, p Progress) *Fetcher {
	f := quickFetcher(p)
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	f.Client.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
	return f
}

func TestRedirectsToAWeakerSchemeOrAnotherProtocolAreRefused(t *testing.T) {
	plain := newOrigin(t, 0, func(int, http.ResponseWriter, *http.Request) {})
	for _, target := range []string{plain.URL + "/sha256sum.txt", "file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/x"} {
		t.Run(strings.SplitN(target, ":", 2)[0], func(t *testing.T) {
			requests := 0
			s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests++
				http.Redirect(w, r, target, http.StatusFound)
			}))
			defer s.Close()
			rec := &recorder{}
			_, err := trustingFetcher(t, s, rec).Get(testContext(t), s.URL+"/sha256sum.txt", 1024)
			var redirect *RedirectError
			if !errors.As(err, &redirect) {
				t.Fatalf("got %v, want a RedirectError", err)
			}
			if requests != 1 || len(rec.retries) != 0 {
				t.Errorf("%d requests, retries %q: want one request, no retry", requests, rec.retries)
			}
		})
	}
}

func TestRedirectLoopFailsAtOnce(t *testing.T) {
	o := newOrigin(t, 20, func(n int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop"+strconv.Itoa(n%2), http.StatusFound)
	})
	rec := &recorder{}
	_, err := quickFetcher(rec).Get(testContext(t), o.URL+"/loop0", 1024)
	var redirect *RedirectError
	if !errors.As(err, &redirect) || len(rec.retries) != 0 {
		t.Fatalf("got %v after retries %q, want a RedirectError at once", err, rec.retries)
	}
}

// Errors that the next attempt would meet again end the download at once, with their cause.
func TestPermanentTransportErrorsAreNotRetried(t *testing.T) {
	t.Run("connection refused on loopback", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		rec := &recorder{}
		_, err = quickFetcher(rec).Get(testContext(t), "http://"+addr+"/a.json", 1024)
		if !errors.Is(err, syscall.ECONNREFUSED) || len(rec.retries) != 0 {
			t.Fatalf("got %v after retries %q, want connection refused at once", err, rec.retries)
		}
	})
	t.Run("TLS verification", func(t *testing.T) {
		s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer s.Close()
		rec := &recorder{}
		_, err := quickFetcher(rec).Get(testContext(t), s.URL+"/a.json", 1024)
		var unknown x509.UnknownAuthorityError
		if !errors.As(err, &unknown) || len(rec.retries) != 0 {
			t.Fatalf("got %v after retries %q, want the unknown authority at once", err, rec.retries)
		}
	})
	t.Run("no such host", func(t *testing.T) {
		// The resolver's answer, as net returns it; no name is looked up.
		err := &transportError{&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "mirror.example", IsNotFound: true}}}
		if _, retry := quickFetcher(nil).retryWait(err, 1); retry {
			t.Error("a name that does not exist is retried")
		}
		timeout := &transportError{&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "i/o timeout", Name: "mirror.example", IsTimeout: true}}}
		if _, retry := quickFetcher(nil).retryWait(timeout, 1); !retry {
			t.Error("a resolver that timed out is not retried")
		}
	})
}

func TestUnlimitedRetries(t *testing.T) {
	f := quickFetcher(nil)
	f.Retries = InfiniteRetries
	o := newOrigin(t, 12, func(n int, w http.ResponseWriter, r *http.Request) {
		if n < 11 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("{}"))
	})
	if _, err := f.Get(testContext(t), o.URL+"/a.json", 1024); err != nil {
		t.Fatalf("got %v, want success after 11 failures", err)
	}
}

// Credentials in a URL (a password, a pre-signed query) appear in no progress, retry or
// error text.
func TestURLCredentialsAreNeverShown(t *testing.T) {
	o := newOrigin(t, 2, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		http.NotFound(w, r)
	})
	secrets := []string{"hunter2", "SIGSECRET", "CREDSECRET", "TOKENSECRET"}
	u := strings.Replace(o.URL, "http://", "http://admin:hunter2@", 1) +
		"/a.iso?X-Amz-Credential=CREDSECRET&X-Amz-Signature=SIGSECRET&token=TOKENSECRET"
	rec := &recorder{}
	err := quickFetcher(rec).Fetch(testContext(t), Artifact{URL: u, SHA256: sha256Hex(nil)}, partIn(t))
	shown := strings.Join(append(append([]string{}, rec.retries...), rec.urls...), "\n") + "\n" + err.Error()
	for _, s := range secrets {
		if strings.Contains(shown, s) {
			t.Errorf("%q shown:\n%s", s, shown)
		}
	}
	if !strings.Contains(err.Error(), "/a.iso") {
		t.Errorf("the error %q does not name the file", err)
	}
	// A URL that cannot be reached says so without its query either.
	l, lerr := net.Listen("tcp", "127.0.0.1:0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = quickFetcher(nil).Get(testContext(t), "http://u:hunter2@"+addr+"/s.json?sig=SIGSECRET", 1024)
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "SIGSECRET") {
		t.Errorf("unreachable: %v", err)
	}
	// Nor does a stream URL that fails (download, serve, build --stream and the drop-in's
	// --stream-base-url all show this error).
	_, err = quickFetcher(nil).LoadStream(testContext(t), "http://u:hunter2@"+addr+"/s.json?sig=SIGSECRET")
	var streamErr *StreamError
	if !errors.As(err, &streamErr) || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "SIGSECRET") ||
		!strings.Contains(err.Error(), "stream http://"+addr+"/s.json") {
		t.Errorf("stream: %v", err)
	}
}

// The lock and the part are opened without following a symbolic link planted in their
// place: its target stays untouched.
func TestCacheDoesNotFollowSymlinks(t *testing.T) {
	data := testBytes(1<<20, 32)
	for _, name := range []string{".lock", "a.iso.part"} {
		t.Run(name, func(t *testing.T) {
			o := newOrigin(t, 1, func(_ int, w http.ResponseWriter, r *http.Request) { serveFile(w, r, data, `"v1"`) })
			dir := t.TempDir()
			sha := sha256Hex(data)
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, sha), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(dir, sha, name)); err != nil {
				t.Fatal(err)
			}
			_, err := newTestCache(t, dir, nil).Get(testContext(t), Artifact{URL: o.URL + "/a.iso", SHA256: sha})
			if err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("got %v, want the symbolic link refused", err)
			}
			if got, _ := os.ReadFile(victim); string(got) != "precious" {
				t.Errorf("the link's target now holds %q", got)
			}
		})
	}
}

// An entry directory that is a symbolic link to a directory elsewhere is refused: neither the
// lock nor the artifact is written into the link's target, for Get and for Upload's lock.
func TestCacheEntryDirectoryThatIsASymlinkIsRefused(t *testing.T) {
	data := testBytes(1<<16, 34)
	for _, upload := range []bool{false, true} {
		o := newOrigin(t, 1, func(_ int, w http.ResponseWriter, r *http.Request) { serveFile(w, r, data, `"v1"`) })
		dir := t.TempDir()
		sha := sha256Hex(data)
		victim := t.TempDir()
		if err := os.Symlink(victim, filepath.Join(dir, sha)); err != nil {
			t.Fatal(err)
		}
		a := Artifact{URL: o.URL + "/a.iso", SHA256: sha}
		var err error
		if upload {
			_, err = newTestCache(t, dir, nil).Upload(testContext(t), a, &Uploader{}, "bucket", "a.iso")
		} else {
			_, err = newTestCache(t, dir, nil).Get(testContext(t), a)
		}
		if err == nil || !strings.Contains(err.Error(), "symbolic link") || !strings.Contains(err.Error(), sha) {
			t.Errorf("upload %v: got %v, want the entry's link refused", upload, err)
		}
		if names, _ := os.ReadDir(victim); len(names) != 0 {
			t.Errorf("upload %v: the link's target now holds %v", upload, names)
		}
	}
}

// A symbolic link in place of an entry is not a hit: it could name any file.
func TestCacheEntryThatIsASymlinkIsRefused(t *testing.T) {
	data := testBytes(1024, 33)
	dir := t.TempDir()
	sha := sha256Hex(data)
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, []byte("not the artifact"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, sha), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(dir, sha, "a.iso")); err != nil {
		t.Fatal(err)
	}
	_, err := newTestCache(t, dir, nil).Get(testContext(t), Artifact{URL: "http://127.0.0.1:1/a.iso", SHA256: sha})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("got %v, want the link refused", err)
	}
}

// Upload opens the entry's file inside the entry and not through a symbolic link: a link in
// its place could name any file, which would be uploaded under the entry's digest.
func TestCacheUploadRefusesASymlinkAtTheEntrysFile(t *testing.T) {
	data := testBytes(1024, 35)
	dir := t.TempDir()
	sha := sha256Hex(data)
	other := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(other, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, sha), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(dir, sha, "a.iso")); err != nil {
		t.Fatal(err)
	}
	a := Artifact{URL: "http://127.0.0.1:1/a.iso", SHA256: sha}
	// No client: the upload must stop before it asks the store anything.
	_, err := newTestCache(t, dir, nil).Upload(testContext(t), a, &Uploader{}, "bucket", "a.iso")
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("got %v, want the link refused", err)
	}
}

// One path per line on standard output: a name with a line break or another control
// character is refused.
func TestArtifactNameWithControlCharactersIsRefused(t *testing.T) {
	for _, u := range []string{"http://h/a%0Ab.iso", "http://h/a%0Db.iso", "http://h/a%1B%5B2Jb.iso"} {
		if err := (Artifact{URL: u, SHA256: sha256Hex(nil)}).check(); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}
