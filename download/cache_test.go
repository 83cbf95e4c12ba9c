package download

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTestCache(t *testing.T, dir string, p Progress) *Cache {
	return &Cache{Dir: dir, Fetcher: quickFetcher(p), lockPoll: 5 * time.Millisecond}
}

// entryFiles lists what a cache entry's directory holds besides its lock.
func entryFiles(t *testing.T, dir, sha string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, sha))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != ".lock" {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestCacheHitNeedsNoNetwork(t *testing.T) {
	data := testBytes(testSize, 10)
	o := newOrigin(t, 1, func(_ int, w http.ResponseWriter, r *http.Request) { serveFile(w, r, data, `"v1"`) })
	a := Artifact{URL: o.URL + "/dir/rhcos-live-iso.x86_64.iso", SHA256: sha256Hex(data)}
	dir := t.TempDir()
	// A digest in capitals names the same entry.
	path, err := newTestCache(t, dir, nil).Get(testContext(t), Artifact{URL: a.URL, SHA256: strings.ToUpper(a.SHA256)})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, a.SHA256, "rhcos-live-iso.x86_64.iso"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	mustHaveBytes(t, path, data)
	if st, _ := os.Stat(path); st.Mode().Perm()&0o222 != 0 {
		t.Errorf("cache entry mode %v: writable, so an in-place edit could change it", st.Mode())
	}
	o.Close()
	again, err := newTestCache(t, dir, nil).Get(testContext(t), a)
	if err != nil || again != path {
		t.Fatalf("with the server stopped: %q, %v; want %q", again, err, path)
	}
	mustHaveBytes(t, again, data)
}

func TestCacheTwoDownloadersFetchOnce(t *testing.T) {
	data := testBytes(testSize, 11)
	waiting := make(chan struct{})
	o := newOrigin(t, 1, func(_ int, w http.ResponseWriter, r *http.Request) {
		// Hold the only download until the other caller is known to wait for it.
		select {
		case <-waiting:
		case <-time.After(10 * time.Second):
		}
		serveFile(w, r, data, `"v1"`)
	})
	a := Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(data)}
	dir := t.TempDir()
	var once sync.Once
	rec := &recorder{onWait: func() { once.Do(func() { close(waiting) }) }}
	var wg sync.WaitGroup
	paths, errs := make([]string, 2), make([]error, 2)
	for i := range 2 {
		wg.Go(func() { paths[i], errs[i] = newTestCache(t, dir, rec).Get(testContext(t), a) })
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("downloader %d: %v", i, errs[i])
		}
		mustHaveBytes(t, paths[i], data)
	}
	if paths[0] != paths[1] {
		t.Errorf("paths %q and %q differ", paths[0], paths[1])
	}
	if n := len(o.seen()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestCacheResumesAnInterruptedRun(t *testing.T) {
	data := testBytes(testSize, 12)
	o := newOrigin(t, 2, func(n int, w http.ResponseWriter, r *http.Request) {
		if n > 0 {
			serveFile(w, r, data, `"v1"`)
			return
		}
		// The first run's body stops at half until the client gives up, so the interruption
		// always comes first, however fast loopback is.
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	a := Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(data)}
	dir := t.TempDir()
	ctx, interrupt := context.WithCancel(testContext(t))
	rec := &recorder{onBytes: func(have int64) {
		if have >= int64(len(data))*3/10 {
			interrupt() // Ctrl-C at 30%
		}
	}}
	if _, err := newTestCache(t, dir, rec).Get(ctx, a); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the interruption", err)
	}
	part := filepath.Join(dir, a.SHA256, "a.iso.part")
	st, err := os.Stat(part)
	if err != nil || st.Size() == 0 || st.Size() >= int64(len(data)) {
		t.Fatalf("part after the interruption: %v, %v; want part of the file", st, err)
	}
	path, err := newTestCache(t, dir, nil).Get(testContext(t), a)
	if err != nil {
		t.Fatal(err)
	}
	mustHaveBytes(t, path, data)
	if got := o.seen()[1]; got.Range != fmt.Sprintf("bytes=%d-", st.Size()) || got.IfRange != `"v1"` {
		t.Errorf("the next run sent %+v, want a range from byte %d with If-Range", got, st.Size())
	}
	mustNotExist(t, part)
}

func TestCacheFailuresLeaveNothing(t *testing.T) {
	data := testBytes(testSize, 13)
	o := newOrigin(t, 2, func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gone.iso" {
			http.NotFound(w, r)
			return
		}
		serveFile(w, r, data, `"v1"`)
	})
	dir := t.TempDir()
	for _, a := range []Artifact{
		{URL: o.URL + "/a.iso", SHA256: sha256Hex([]byte("what the stream promised"))},
		{URL: o.URL + "/gone.iso", SHA256: sha256Hex(data)},
	} {
		if _, err := newTestCache(t, dir, nil).Get(testContext(t), a); err == nil {
			t.Fatalf("%s: no error", a.URL)
		}
		if left := entryFiles(t, dir, a.SHA256); len(left) != 0 {
			t.Errorf("%s: left %q behind", a.URL, left)
		}
	}
}

func TestCacheChecksSignatures(t *testing.T) {
	data := testBytes(testSize, 14)
	signer, forger := newSigner(t, "signer"), newSigner(t, "forger")
	good, forged := detachSign(t, signer, data), detachSign(t, forger, data)
	o := newOrigin(t, 4, func(_ int, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good.iso.sig":
			w.Write(good)
		case "/forged.iso.sig":
			w.Write(forged)
		default:
			serveFile(w, r, data, `"v1"`)
		}
	})
	keyring, err := ParseKeyring(armoredPublicKey(t, signer))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := newTestCache(t, dir, nil)
	c.Keyring = keyring
	sha := sha256Hex(data)
	path, err := c.Get(testContext(t), Artifact{URL: o.URL + "/good.iso", SHA256: sha, SignatureURL: o.URL + "/good.iso.sig"})
	if err != nil {
		t.Fatal(err)
	}
	mustHaveBytes(t, path, data)
	mustHaveBytes(t, path+".sig", good)

	_, err = c.Get(testContext(t), Artifact{URL: o.URL + "/forged.iso", SHA256: sha, SignatureURL: o.URL + "/forged.iso.sig"})
	var bad *SignatureError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "/forged.iso") {
		t.Fatalf("forged signature: got %v, want a SignatureError naming the URL", err)
	}
	for _, name := range []string{"forged.iso", "forged.iso.part", "forged.iso.sig"} {
		mustNotExist(t, filepath.Join(dir, sha, name))
	}
	if _, err := c.Get(testContext(t), Artifact{URL: o.URL + "/unsigned.iso", SHA256: sha}); !errors.Is(err, ErrNoSignature) {
		t.Errorf("unsigned artifact: got %v, want ErrNoSignature", err)
	}
	// A hit checks the kept signature, with the server gone.
	o.Close()
	if again, err := c.Get(testContext(t), Artifact{URL: o.URL + "/good.iso", SHA256: sha, SignatureURL: o.URL + "/good.iso.sig"}); err != nil || again != path {
		t.Errorf("hit with a keyring: %q, %v", again, err)
	}
}
