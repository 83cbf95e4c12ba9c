package download

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testSize = 4 << 20

func partIn(t *testing.T) *Part {
	return &Part{Path: filepath.Join(t.TempDir(), "rhcos-live.x86_64.iso.part")}
}

func TestFetchResumesWhereTheConnectionWasCut(t *testing.T) {
	data := testBytes(testSize, 1)
	cut := len(data) * 3 / 10
	o := newOrigin(t, 2, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			cutAt(w, data, cut, `"v1"`)
			return
		}
		serveFile(w, r, data, `"v1"`)
	})
	part := partIn(t)
	a := Artifact{URL: o.URL + "/rhcos-live.x86_64.iso", SHA256: sha256Hex(data)}
	rec := &recorder{}
	if err := quickFetcher(rec).Fetch(testContext(t), a, part); err != nil {
		t.Fatal(err)
	}
	mustHaveBytes(t, part.Path, data)
	// Progress hears the resumed response start where the first one broke, of the same total.
	if want := []string{fmt.Sprintf("0/%d", len(data)), fmt.Sprintf("%d/%d", cut, len(data))}; fmt.Sprint(rec.starts) != fmt.Sprint(want) {
		t.Errorf("progress starts %q, want %q", rec.starts, want)
	}
	got := o.seen()
	if want := fmt.Sprintf("bytes=%d-", cut); got[1].Range != want || got[1].IfRange != `"v1"` {
		t.Errorf("resumed request sent Range %q, If-Range %q; want %q, %q", got[1].Range, got[1].IfRange, want, `"v1"`)
	}
}

// An unquoted ETag is no entity tag (RFC 9110): the resumed request names the version by its
// Last-Modified date instead, which a file server honours, so the download goes on.
func TestFetchResumesWithTheDateWhenTheETagIsUnquoted(t *testing.T) {
	data := testBytes(testSize, 3)
	cut := len(data) / 2
	mod := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	o := newOrigin(t, 2, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Last-Modified", mod.Format(http.TimeFormat))
		if n == 0 {
			cutAt(w, data, cut, "v1")
			return
		}
		w.Header().Set("ETag", "v1")
		http.ServeContent(w, r, "", mod, bytes.NewReader(data))
	})
	part := partIn(t)
	a := Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(data)}
	if err := quickFetcher(nil).Fetch(testContext(t), a, part); err != nil {
		t.Fatal(err)
	}
	mustHaveBytes(t, part.Path, data)
	if got := o.seen()[1]; got.Range != fmt.Sprintf("bytes=%d-", cut) || got.IfRange != mod.Format(http.TimeFormat) {
		t.Errorf("resumed request sent Range %q, If-Range %q; want the Last-Modified date", got.Range, got.IfRange)
	}
}

func TestFetchStartsOverWhenTheServerIgnoresRange(t *testing.T) {
	data := testBytes(testSize, 2)
	o := newOrigin(t, 2, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			cutAt(w, data, len(data)*3/10, `"v1"`)
			return
		}
		w.Write(data) // 200 with the whole file, whatever the Range
	})
	part := partIn(t)
	a := Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(data)}
	if err := quickFetcher(nil).Fetch(testContext(t), a, part); err != nil {
		t.Fatal(err)
	}
	mustHaveBytes(t, part.Path, data)
	if r := o.seen()[1].Range; r == "" {
		t.Error("the second request did not ask for a range")
	}
}

// A file replaced between attempts: a server honouring If-Range sends the new one whole
// (200); one that ignores If-Range sends a 206 with the new ETag, which must not be appended.
func TestFetchStartsOverWhenTheETagChanges(t *testing.T) {
	oldData, newData := testBytes(testSize, 3), testBytes(testSize, 4)
	for _, honoursIfRange := range []bool{true, false} {
		t.Run(fmt.Sprintf("If-Range honoured %v", honoursIfRange), func(t *testing.T) {
			o := newOrigin(t, 3, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 0 {
					cutAt(w, oldData, len(oldData)*3/10, `"old"`)
					return
				}
				if !honoursIfRange {
					r.Header.Del("If-Range")
				}
				serveFile(w, r, newData, `"new"`)
			})
			part := partIn(t)
			a := Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(newData)}
			if err := quickFetcher(nil).Fetch(testContext(t), a, part); err != nil {
				t.Fatal(err)
			}
			mustHaveBytes(t, part.Path, newData)
			got := o.seen()
			if honoursIfRange && (len(got) != 2 || got[1].IfRange != `"old"`) {
				t.Errorf("requests %+v: want the resumed one, with If-Range, answered with the whole file", got)
			}
			if !honoursIfRange && (len(got) != 3 || got[2].Range != "") {
				t.Errorf("requests %+v: want a third request for the whole file", got)
			}
		})
	}
}

func TestFetchWrongSHA256LeavesNothing(t *testing.T) {
	data := testBytes(testSize, 5)
	o := newOrigin(t, 1, func(_ int, w http.ResponseWriter, r *http.Request) { serveFile(w, r, data, `"v1"`) })
	part := partIn(t)
	want := sha256Hex([]byte("another file"))
	url := o.URL + "/a.iso"
	err := quickFetcher(nil).Fetch(testContext(t), Artifact{URL: url, SHA256: want}, part)
	var mismatch *DigestMismatchError
	if !errors.As(err, &mismatch) {
		t.Fatalf("got %v, want a DigestMismatchError", err)
	}
	for _, s := range []string{url, want, sha256Hex(data)} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
	mustNotExist(t, part.Path)
}

func TestFetchHonoursRetryAfterUpToTheCap(t *testing.T) {
	data := testBytes(64<<10, 6)
	o := newOrigin(t, 3, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 0:
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusServiceUnavailable)
		case 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			serveFile(w, r, data, `"v1"`)
		}
	})
	rec := &recorder{}
	f := quickFetcher(rec)
	part := partIn(t)
	if err := f.Fetch(testContext(t), Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(data)}, part); err != nil {
		t.Fatal(err)
	}
	mustHaveBytes(t, part.Path, data)
	// An hour asked for is capped; "0" falls back to the backoff of the second failure.
	if want := []time.Duration{f.MaxRetryAfter, 2 * f.Backoff}; fmt.Sprint(rec.waits) != fmt.Sprint(want) {
		t.Errorf("waited %v, want %v", rec.waits, want)
	}
	if !strings.Contains(rec.retries[0], "503") {
		t.Errorf("retry reported %q, want the 503 named", rec.retries[0])
	}
}

func TestFetchResumesAStalledBody(t *testing.T) {
	data := testBytes(testSize, 7)
	stallAt := len(data) * 3 / 10
	o := newOrigin(t, 2, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.Write(data[:stallAt])
			w.(http.Flusher).Flush()
			waitForClientToGo(r) // a body that never continues
			return
		}
		serveFile(w, r, data, `"v1"`)
	})
	rec := &recorder{}
	part := partIn(t)
	if err := quickFetcher(rec).Fetch(testContext(t), Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(data)}, part); err != nil {
		t.Fatal(err)
	}
	mustHaveBytes(t, part.Path, data)
	if len(rec.retries) != 1 || !strings.Contains(rec.retries[0], ErrStalled.Error()) {
		t.Errorf("retries %q, want one for the stall", rec.retries)
	}
	if got := o.seen()[1].Range; got != fmt.Sprintf("bytes=%d-", stallAt) {
		t.Errorf("resumed with Range %q", got)
	}
}

func TestFetchRetriesAServerThatSendsNoHeaders(t *testing.T) {
	data := testBytes(64<<10, 9)
	o := newOrigin(t, 2, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			waitForClientToGo(r) // no status line, no headers
			return
		}
		serveFile(w, r, data, `"v1"`)
	})
	rec := &recorder{}
	f := quickFetcher(rec)
	f.Client.Transport.(*http.Transport).ResponseHeaderTimeout = 100 * time.Millisecond
	part := partIn(t)
	if err := f.Fetch(testContext(t), Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(data)}, part); err != nil {
		t.Fatal(err)
	}
	mustHaveBytes(t, part.Path, data)
	if len(rec.retries) != 1 || !strings.Contains(rec.retries[0], "timeout awaiting response headers") {
		t.Errorf("retries %q, want one for the header timeout", rec.retries)
	}
}

func TestFetchDoesNotRetryNotFound(t *testing.T) {
	o := newOrigin(t, 1, func(_ int, w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	url := o.URL + "/gone.iso"
	err := quickFetcher(nil).Fetch(testContext(t), Artifact{URL: url, SHA256: sha256Hex(nil)}, partIn(t))
	var status *StatusError
	if !errors.As(err, &status) || status.Status != http.StatusNotFound || !strings.Contains(err.Error(), url) {
		t.Fatalf("got %v, want a 404 StatusError naming %s", err, url)
	}
}

func TestFetchGivesUpAfterTheRetries(t *testing.T) {
	f := quickFetcher(nil)
	o := newOrigin(t, f.Retries+1, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	})
	err := f.Fetch(testContext(t), Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(nil)}, partIn(t))
	if err == nil || !strings.Contains(err.Error(), "502") || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("got %v, want a 502 given up on", err)
	}
	if n := len(o.seen()); n != f.Retries+1 {
		t.Errorf("%d requests, want %d", n, f.Retries+1)
	}
}

// A part left by an earlier process is resumed, re-hashed, and completed.
func TestFetchResumesAPartFromAnEarlierRun(t *testing.T) {
	data := testBytes(testSize, 8)
	o := newOrigin(t, 1, func(_ int, w http.ResponseWriter, r *http.Request) { serveFile(w, r, data, `"v1"`) })
	part := partIn(t)
	half := len(data) / 2
	if err := os.WriteFile(part.Path, data[:half], 0o644); err != nil {
		t.Fatal(err)
	}
	part.Validator = `"v1"`
	if err := quickFetcher(nil).Fetch(testContext(t), Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(data)}, part); err != nil {
		t.Fatal(err)
	}
	mustHaveBytes(t, part.Path, data)
	if got := o.seen()[0]; got.Range != fmt.Sprintf("bytes=%d-", half) || got.IfRange != `"v1"` {
		t.Errorf("request %+v, want a range from byte %d with If-Range", got, half)
	}
}

func TestGetRefusesABodyOverTheLimit(t *testing.T) {
	o := newOrigin(t, 1, func(_ int, w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 2048)) })
	_, err := quickFetcher(nil).Get(testContext(t), o.URL+"/stream.json", 1024)
	if err == nil || !strings.Contains(err.Error(), "larger than 1024 bytes") {
		t.Fatalf("got %v, want the size limit named", err)
	}
}

// A part that is already whole (a process killed between the last byte and the rename) is
// finished by the server's 416 for the range after its end.
func TestFetchCompletesAWholePart(t *testing.T) {
	data := testBytes(testSize, 15)
	o := newOrigin(t, 1, func(_ int, w http.ResponseWriter, r *http.Request) { serveFile(w, r, data, `"v1"`) })
	part := partIn(t)
	if err := os.WriteFile(part.Path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	part.Validator = `"v1"`
	if err := quickFetcher(nil).Fetch(testContext(t), Artifact{URL: o.URL + "/a.iso", SHA256: sha256Hex(data)}, part); err != nil {
		t.Fatal(err)
	}
	mustHaveBytes(t, part.Path, data)
	if got := o.seen()[0].Range; got != fmt.Sprintf("bytes=%d-", len(data)) {
		t.Errorf("asked for %q", got)
	}
}
