package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
)

// Fetcher downloads over HTTP: it resumes a body cut short with Range and If-Range, retries
// what may succeed later with backoff, and abandons a body that stalls. NewFetcher sets the
// defaults; tests shorten the waits.
type Fetcher struct {
	// Client makes the requests. NewFetcher's honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY,
	// and bounds the wait for response headers but not the body, which takes minutes.
	Client *http.Client
	// Retries bounds the retries in a row after attempts that received no byte; one that
	// received some shows the server works, and starts the count again.
	Retries int
	// Backoff is the wait after the first failed attempt; it doubles up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// MaxRetryAfter caps the wait a server asks for with Retry-After.
	MaxRetryAfter time.Duration
	// StallTimeout abandons, then resumes, a body that delivers no byte for this long.
	StallTimeout time.Duration
	// Progress hears about each response and retry; nil is silence.
	Progress Progress

	// streamBase replaces Fedora's stream URL prefix, for tests.
	streamBase string
}

// HeaderTimeout bounds the wait for a response's headers in NewFetcher's client.
const HeaderTimeout = 30 * time.Second

// NewFetcher returns a Fetcher with the defaults of coreos-installer's retries (1 s doubling)
// and a one-minute stall timeout.
func NewFetcher() *Fetcher {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = HeaderTimeout
	// Range offsets must count bytes of the file, not of a compressed transfer.
	t.DisableCompression = true
	return &Fetcher{
		Client:        &http.Client{Transport: t},
		Retries:       6,
		Backoff:       time.Second,
		MaxBackoff:    30 * time.Second,
		MaxRetryAfter: 5 * time.Minute,
		StallTimeout:  time.Minute,
	}
}

// Part is a download in progress on disk: its bytes so far and the validator (a strong ETag,
// else Last-Modified) of the response they came from, sent as If-Range when resuming.
type Part struct {
	Path      string
	Validator string
	// SaveValidator, when set, keeps each new validator as soon as a response brings it,
	// where the next process finds it even if this one is killed mid-body.
	SaveValidator func(string) error
}

// Fetch downloads a into part, resuming from the bytes part already holds, and checks the
// whole file's sha256. On a mismatch it removes the part and returns a *DigestMismatchError;
// on other failures the part stays, for the next Fetch to resume. part.Validator is updated.
func (f *Fetcher) Fetch(ctx context.Context, a Artifact, part *Part) error {
	a.SHA256 = strings.ToLower(a.SHA256)
	if err := a.check(); err != nil {
		return err
	}
	file, err := os.OpenFile(part.Path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer file.Close()
	s := &fileSink{file: file, hash: sha256.New(), saveValidator: part.SaveValidator}
	// Hashing what an earlier attempt left also moves the offset to its end, where writes go.
	have, err := io.Copy(s.hash, file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", part.Path, err)
	}
	if have == 0 {
		part.Validator = ""
	}
	if err := f.transfer(ctx, a.URL, s, have, &part.Validator); err != nil {
		return err
	}
	if got := hex.EncodeToString(s.hash.Sum(nil)); got != a.SHA256 {
		file.Close()
		part.Validator = ""
		if err := os.Remove(part.Path); err != nil {
			return errors.Join(&DigestMismatchError{URL: a.URL, Want: a.SHA256, Got: got}, err)
		}
		return &DigestMismatchError{URL: a.URL, Want: a.SHA256, Got: got}
	}
	return file.Sync()
}

// Get downloads a small document (stream metadata, sha256sum.txt, a signature) into memory,
// retrying like Fetch; a body over limit bytes is an error.
func (f *Fetcher) Get(ctx context.Context, url string, limit int64) ([]byte, error) {
	if !isHTTPURL(url) {
		return nil, fmt.Errorf("%q is not an http(s) URL", url)
	}
	s := &memorySink{limit: limit, url: url}
	var validator string
	if err := f.transfer(ctx, url, s, 0, &validator); err != nil {
		return nil, err
	}
	return s.data, nil
}

// transfer downloads url into s, which holds have bytes from the response validator names,
// until the body is complete or the attempts run out.
func (f *Fetcher) transfer(ctx context.Context, url string, s sink, have int64, validator *string) error {
	failures := 0
	for {
		received, err := f.attempt(ctx, url, s, &have, validator)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if received > 0 {
			failures = 0 // the connection works; it broke, and the download goes on
		}
		failures++
		wait, ok := f.retryWait(err, failures)
		if !ok {
			return err
		}
		if failures > f.Retries {
			return fmt.Errorf("%w (gave up after %d retries)", err, f.Retries)
		}
		f.progress().Retry(url, err, wait)
		if err := httpsem.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// attempt makes one request for the rest of url and writes its body to s. It returns the
// bytes received.
func (f *Fetcher) attempt(ctx context.Context, url string, s sink, have *int64, validator *string) (int64, error) {
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if *have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", *have))
		if *validator != "" {
			req.Header.Set("If-Range", *validator)
		}
	}
	resp, err := f.Client.Do(req)
	if err != nil {
		return 0, &transportError{err}
	}
	defer resp.Body.Close()
	total := resp.ContentLength
	startOver := func() error {
		*have, *validator = 0, ""
		return s.restart()
	}
	switch resp.StatusCode {
	case http.StatusOK:
		// The whole file: the server ignored the range, or it changed since (If-Range).
		if *have > 0 {
			if err := startOver(); err != nil {
				return 0, err
			}
		}
	case http.StatusPartialContent:
		cr, err := httpsem.ParseContentRange(resp.Header.Get("Content-Range"))
		next := httpsem.RangeValidator(resp.Header)
		if err != nil || cr.First != *have || (*validator != "" && next != "" && next != *validator) {
			if err := startOver(); err != nil {
				return 0, err
			}
			return 0, errRangeRejected
		}
		total = cr.Size
	case http.StatusRequestedRangeNotSatisfiable:
		// Nothing after the bytes held: the part may already be whole (the sha256 decides).
		if cr, err := httpsem.ParseContentRange(resp.Header.Get("Content-Range")); err == nil && cr.Size == *have {
			return 0, nil
		}
		if err := startOver(); err != nil {
			return 0, err
		}
		return 0, errRangeRejected
	default:
		return 0, newStatusError(url, resp)
	}
	*validator = httpsem.RangeValidator(resp.Header)
	if err := s.begin(*validator); err != nil {
		return 0, err
	}
	f.progress().Start(url, *have, total)
	received, err := f.copyBody(reqCtx, cancel, s, resp.Body, have)
	if err == nil && total >= 0 && *have != total {
		err = &transportError{fmt.Errorf("GET %s: the body ended at byte %d of %d", url, *have, total)}
	}
	return received, err
}

// copyBody writes body to s, and cancels the request with ErrStalled when no byte arrives
// for the stall timeout: a header timeout alone would let a dead body hang forever.
func (f *Fetcher) copyBody(reqCtx context.Context, cancel context.CancelCauseFunc, s sink, body io.Reader, have *int64) (int64, error) {
	watchdog := time.AfterFunc(f.StallTimeout, func() { cancel(ErrStalled) })
	defer watchdog.Stop()
	buf := make([]byte, 256<<10)
	var received int64
	for {
		n, err := body.Read(buf)
		watchdog.Reset(f.StallTimeout)
		if n > 0 {
			if _, werr := s.Write(buf[:n]); werr != nil {
				return received, werr
			}
			received += int64(n)
			*have += int64(n)
			f.progress().Update(*have)
		}
		if err == io.EOF {
			return received, nil
		}
		if err != nil {
			if cause := context.Cause(reqCtx); errors.Is(cause, ErrStalled) {
				err = fmt.Errorf("%w (%v)", ErrStalled, f.StallTimeout)
			}
			return received, &transportError{err}
		}
	}
}

func newStatusError(url string, resp *http.Response) *StatusError {
	e := &StatusError{URL: url, Status: resp.StatusCode}
	if wait, ok := httpsem.RetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		e.RetryAfter = wait
	}
	return e
}

func (f *Fetcher) progress() Progress {
	if f.Progress == nil {
		return silent{}
	}
	return f.Progress
}
