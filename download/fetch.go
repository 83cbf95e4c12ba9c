package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
	"github.com/sno-iso/sno-iso/internal/redact"
)

// Fetcher downloads over HTTP: it resumes a body cut short with Range and If-Range, retries
// what may succeed later with backoff, and abandons a body that stalls. NewFetcher sets the
// defaults; tests shorten the waits.
type Fetcher struct {
	// Client makes the requests. NewFetcher's honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY,
	// and bounds the wait for response headers but not the body, which takes minutes.
	Client *http.Client
	// Retries bounds the retries in a row after attempts that brought no new byte; one that
	// brought some shows the server works, and starts the count again. InfiniteRetries
	// retries for as long as the errors may go away.
	Retries int
	// MaxSize bounds a body whose server declared no length.
	MaxSize int64
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

// InfiniteRetries is the Retries of a Fetcher that never gives up on a transient error.
const InfiniteRetries = -1

// DefaultMaxSize is NewFetcher's MaxSize: well above any live ISO.
const DefaultMaxSize = 8 << 30

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
		MaxSize:       DefaultMaxSize,
		Backoff:       time.Second,
		MaxBackoff:    30 * time.Second,
		MaxRetryAfter: 5 * time.Minute,
		StallTimeout:  time.Minute,
	}
}

// Part is a download in progress on disk: its bytes so far and the validator (a strong ETag,
// else Last-Modified) of the response they came from, sent as If-Range when resuming.
type Part struct {
	// Path is the part's file; relative to Root when Root is set, which keeps every open of
	// it below that directory.
	Root      *os.Root
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
	file, err := openNoFollow(part.Root, part.Path)
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
	discard := func(cause error) error {
		file.Close()
		part.Validator = ""
		if err := part.remove(); err != nil {
			return errors.Join(cause, err)
		}
		return cause
	}
	if err := f.transfer(ctx, a.URL, s, have, &part.Validator); err != nil {
		var tooLarge *TooLargeError
		if errors.As(err, &tooLarge) {
			return discard(err) // not the file: nothing to resume
		}
		return err
	}
	if got := hex.EncodeToString(s.hash.Sum(nil)); got != a.SHA256 {
		return discard(&DigestMismatchError{URL: redact.URL(a.URL), Want: a.SHA256, Got: got, Recorded: s.recorded})
	}
	return file.Sync()
}

// Get downloads a small document (stream metadata, sha256sum.txt, a signature) into memory,
// retrying like Fetch; a body over limit bytes is an error.
func (f *Fetcher) Get(ctx context.Context, url string, limit int64) ([]byte, error) {
	if !isHTTPURL(url) {
		return nil, fmt.Errorf("%s is not an http(s) URL", redact.URL(url))
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
	shown := redact.URL(url)
	failures := 0
	// Only bytes past the most ever held are progress: a server that cuts its body and
	// ignores Range sends the same first bytes each time.
	most := have
	for {
		err := f.attempt(ctx, url, shown, s, &have, validator)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if have > most {
			most = have
			failures = 0 // the connection works; it broke, and the download goes on
		}
		failures++
		wait, ok := f.retryWait(err, failures)
		if !ok {
			return err
		}
		if f.Retries != InfiniteRetries && failures > f.Retries {
			return fmt.Errorf("%w (gave up after %d retries)", err, f.Retries)
		}
		f.progress().Retry(shown, err, wait)
		if err := httpsem.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// attempt makes one request for the rest of url (shown, without its credentials, in what
// it reports) and writes its body to s.
func (f *Fetcher) attempt(ctx context.Context, url, shown string, s sink, have *int64, validator *string) error {
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", shown, err)
	}
	if *have > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", *have))
		if *validator != "" {
			req.Header.Set("If-Range", *validator)
		}
	}
	client := *f.Client
	client.CheckRedirect = checkRedirect
	resp, err := client.Do(req)
	if err != nil {
		return requestError(shown, err)
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
				return err
			}
		}
	case http.StatusPartialContent:
		cr, err := httpsem.ParseContentRange(resp.Header.Get("Content-Range"))
		next := httpsem.RangeValidator(resp.Header)
		if err != nil || cr.First != *have || (*validator != "" && next != "" && next != *validator) {
			if err := startOver(); err != nil {
				return err
			}
			return errRangeRejected
		}
		total = cr.Size
	case http.StatusRequestedRangeNotSatisfiable:
		// Nothing after the bytes held: the part may already be whole (the sha256 decides).
		if cr, err := httpsem.ParseContentRange(resp.Header.Get("Content-Range")); err == nil && cr.Size == *have {
			return nil
		}
		if err := startOver(); err != nil {
			return err
		}
		return errRangeRejected
	default:
		return newStatusError(shown, resp)
	}
	*validator = httpsem.RangeValidator(resp.Header)
	if err := s.begin(*validator, resp.Header); err != nil {
		return err
	}
	f.progress().Start(shown, *have, total)
	limit := &TooLargeError{URL: shown, Limit: f.MaxSize}
	if total >= 0 {
		limit.Limit, limit.Declared = total, true
	}
	err = f.copyBody(reqCtx, cancel, s, resp.Body, have, limit)
	if err == nil && total >= 0 && *have != total {
		err = &transportError{fmt.Errorf("GET %s: the body ended at byte %d of %d", shown, *have, total)}
	}
	return err
}

// checkRedirect follows a redirect only to http(s), never from https down to http, and
// not in a loop: none of these would go differently on the next attempt.
func checkRedirect(req *http.Request, via []*http.Request) error {
	prev := via[len(via)-1].URL
	refuse := func(why string) error {
		return &RedirectError{From: redact.URL(prev.String()), To: redact.URL(req.URL.String()), Why: why}
	}
	switch {
	case req.URL.Scheme != "http" && req.URL.Scheme != "https":
		return refuse("sno-iso downloads over http(s) only")
	case prev.Scheme == "https" && req.URL.Scheme == "http":
		return refuse("from https down to plain http, where anyone on the way can change the bytes")
	case len(via) >= maxRedirects:
		return refuse(fmt.Sprintf("more than %d redirects in a row (a loop?)", maxRedirects))
	}
	return nil
}

// maxRedirects is net/http's own default bound.
const maxRedirects = 10

// requestError is a request that got no response. The *url.Error around it would repeat the
// whole URL, credentials included: it is replaced by the shown URL.
func requestError(shown string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var redirect *RedirectError
	if errors.As(err, &redirect) {
		return redirect
	}
	return &transportError{fmt.Errorf("GET %s: %w", shown, err)}
}

// copyBody writes body to s, up to limit.Limit bytes in all, and cancels the request with
// ErrStalled when no byte arrives for the stall timeout: a header timeout alone would let a
// dead body hang forever.
func (f *Fetcher) copyBody(reqCtx context.Context, cancel context.CancelCauseFunc, s sink, body io.Reader, have *int64,
	limit *TooLargeError) error {
	watchdog := time.AfterFunc(f.StallTimeout, func() { cancel(ErrStalled) })
	defer watchdog.Stop()
	buf := make([]byte, 256<<10)
	for {
		n, err := body.Read(buf[:min(int64(len(buf)), max(limit.Limit-*have, 0)+1)])
		watchdog.Reset(f.StallTimeout)
		if int64(n) > limit.Limit-*have {
			return limit
		}
		if n > 0 {
			if _, werr := s.Write(buf[:n]); werr != nil {
				return werr
			}
			*have += int64(n)
			f.progress().Update(*have)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if cause := context.Cause(reqCtx); errors.Is(cause, ErrStalled) {
				err = fmt.Errorf("%w (%v)", ErrStalled, f.StallTimeout)
			}
			return &transportError{err}
		}
	}
}

// remove removes the part's file.
func (p *Part) remove() error {
	if p.Root != nil {
		return p.Root.Remove(p.Path)
	}
	return os.Remove(p.Path)
}

// openNoFollow opens (creating it) a file of the cache, name in root (or a path when root is
// nil), refusing a symbolic link in its place: whoever else can write the directory must not
// make a download overwrite the link's target.
func openNoFollow(root *os.Root, name string) (*os.File, error) {
	lstat, openFile, path := os.Lstat, os.OpenFile, name
	if root != nil {
		lstat, openFile, path = root.Lstat, root.OpenFile, filepath.Join(root.Name(), name)
	}
	if st, err := lstat(name); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link, not followed; remove it", path)
	}
	f, err := openFile(name, os.O_RDWR|os.O_CREATE|oNoFollow, 0o644)
	if err != nil {
		if st, lerr := lstat(name); lerr == nil && st.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is a symbolic link, not followed; remove it", path)
		}
		return nil, err
	}
	return f, nil
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
