package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// countingServer answers every request with handle and counts them; beyond maxRequests it
// fails the test and answers 418.
func countingServer(t *testing.T, maxRequests int32, handle http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > maxRequests {
			t.Errorf("request %d: more than the %d expected", n.Load(), maxRequests)
			w.WriteHeader(http.StatusTeapot)
			return
		}
		handle(w, r)
	}))
	t.Cleanup(s.Close)
	return s, &n
}

func TestDownloadFetchRetries(t *testing.T) {
	sha := bytesSHA(nil)
	for _, tc := range []struct {
		retries  string
		requests int32
	}{{"0", 1}, {"1", 2}} {
		s, n := countingServer(t, tc.requests, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		})
		r := sno(t, nil, "download", "--url", s.URL+"/a.iso", "--sha256", sha, "--cache-dir", t.TempDir(), "--fetch-retries", tc.retries)
		wantError(t, r, "503")
		if n.Load() != tc.requests {
			t.Errorf("--fetch-retries %s: %d requests, want %d", tc.retries, n.Load(), tc.requests)
		}
	}
	for _, bad := range []string{"-1", "lots", "infinity"} {
		r := sno(t, nil, "download", "--url", "http://127.0.0.1:1/a.iso", "--sha256", sha, "--fetch-retries", bad)
		wantFailure(t, r, "--fetch-retries", "infinite")
		if r.code != 2 {
			t.Errorf("--fetch-retries %s: exit %d, want 2", bad, r.code)
		}
	}
}

// An endless body of undeclared length stops at --max-size and leaves no part behind.
func TestDownloadMaxSize(t *testing.T) {
	chunk := make([]byte, 64<<10)
	s, _ := countingServer(t, 1, func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 256 && r.Context().Err() == nil; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	cache := t.TempDir()
	sha := bytesSHA([]byte("x"))
	r := sno(t, nil, "download", "--url", s.URL+"/a.iso", "--sha256", sha, "--cache-dir", cache, "--max-size", "1MiB")
	wantError(t, r, "1048576 bytes", "--max-size")
	if left := dirEntries(t, filepath.Join(cache, sha)); strings.Join(left, " ") != ".lock" {
		t.Errorf("cache entry holds %q", left)
	}
	for _, bad := range []string{"1XB", "-5", "", "1.5G"} {
		r := sno(t, nil, "download", "--url", s.URL+"/a.iso", "--sha256", sha, "--max-size", bad)
		wantFailure(t, r, "--max-size")
		if r.code != 2 {
			t.Errorf("--max-size %q: exit %d, want 2", bad, r.code)
		}
	}
}

// Nothing of a URL's password or pre-signed query reaches standard error.
func TestDownloadShowsNoURLCredentials(t *testing.T) {
	s, _ := countingServer(t, 2, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sha256sum.txt" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		http.NotFound(w, r)
	})
	withSecrets := func(path string) string {
		return strings.Replace(s.URL, "http://", "http://admin:hunter2@", 1) + path + "?X-Amz-Credential=CREDSECRET&X-Amz-Signature=SIGSECRET"
	}
	r := sno(t, nil, "download", "--url", withSecrets("/a.iso"), "--sha256sum-url", withSecrets("/sha256sum.txt"),
		"--cache-dir", t.TempDir(), "--fetch-retries", "1")
	wantError(t, r, s.URL+"/sha256sum.txt", "503")
	for _, secret := range []string{"hunter2", "CREDSECRET", "SIGSECRET"} {
		if strings.Contains(string(r.stderr), secret) {
			t.Errorf("stderr shows %q:\n%s", secret, r.stderr)
		}
	}
	if !strings.Contains(string(r.stderr), "Retrying") {
		t.Errorf("no retry line to check:\n%s", r.stderr)
	}
}
