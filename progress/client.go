package progress

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/internal/redact"
	"github.com/sno-iso/sno-iso/internal/safetext"
)

// Send posts report to a report URL. A log over MaxLog bytes is cut to its end.
func Send(ctx context.Context, client *http.Client, url string, report Report) error {
	report.Log = tail(report.Log, MaxLog)
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(report); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, &body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return hideToken(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return statusError(resp)
	}
	return nil
}

// Fetch gets the records behind a report URL.
func Fetch(ctx context.Context, client *http.Client, url string) ([]Record, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, hideToken(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(resp)
	}
	var st Status
	if err := json.NewDecoder(io.LimitReader(resp.Body, int64(MaxFileSize)+1<<20)).Decode(&st); err != nil {
		return nil, fmt.Errorf("the server's answer is not a node's records: %w", err)
	}
	for _, rec := range st.Records {
		if _, err := ParsePhase(string(rec.Phase)); err != nil {
			return nil, fmt.Errorf("the server's answer is not a node's records: %w", err)
		}
	}
	return st.Records, nil
}

// hideToken takes the report URL out of a transport error: its token lets anyone forge the
// node's reports. The URL keeps its host and node, the token shown as {token}, and loses any
// password or query (redact.URL).
func hideToken(err error) error {
	var urlErr *url.Error
	if !errors.As(err, &urlErr) {
		return err
	}
	shown := redact.URL(urlErr.URL)
	// BASE/TOKEN/NODE/report, BASE possibly with a path of its own.
	if segs := strings.Split(shown, "/"); len(segs) >= 6 && "/"+segs[len(segs)-1] == reportSuffix {
		segs[len(segs)-3] = "{token}"
		shown = strings.Join(segs, "/")
	}
	return &url.Error{Op: urlErr.Op, URL: shown, Err: urlErr.Err}
}

// HTTPError is an answer other than the protocol's.
type HTTPError struct {
	Status int
	Text   string
}

func (e *HTTPError) Error() string {
	// The server may be an impostor: its words reach the terminal escaped.
	return fmt.Sprintf("the server answered %d %s: %s", e.Status, http.StatusText(e.Status), safetext.Escape(e.Text))
}

func statusError(resp *http.Response) error {
	text, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return &HTTPError{Status: resp.StatusCode, Text: string(bytes.TrimSpace(text))}
}

// FailedError is a wait ended by the node's failure report.
type FailedError struct{ Record Record }

func (e *FailedError) Error() string {
	return "the node reported a failure: " + e.Record.String()
}

// TimeoutError is a wait that ran out of time; Reached is how far the node got.
type TimeoutError struct {
	Target, Reached Phase
}

func (e *TimeoutError) Error() string {
	reached := "no report"
	if e.Reached != "" {
		reached = "the last phase reported is " + string(e.Reached)
	}
	return fmt.Sprintf("the node did not reach %s in time: %s", e.Target, reached)
}

// Wait polls records every interval until they reach target (returning the record that did),
// report a failure that comes after everything else (FailedError), or ctx ends
// (TimeoutError). Each record not seen before is passed to seen, in order. A source that fails
// is tried again at the next interval: a server restarting is not the node failing.
func Wait(ctx context.Context, records func(context.Context) ([]Record, error), target Phase, interval time.Duration,
	seen func(Record), problem func(error)) (Record, error) {
	shown := 0
	var reached Phase
	for {
		recs, err := records(ctx)
		if err != nil && problem != nil && ctx.Err() == nil {
			problem(err)
		}
		for ; shown < len(recs); shown++ {
			if seen != nil {
				seen(recs[shown])
			}
		}
		latest, failure := Latest(recs)
		if latest != "" {
			reached = latest
		}
		for _, r := range recs {
			if r.Phase.Reaches(target) {
				return r, nil
			}
		}
		if failure != nil {
			return *failure, &FailedError{Record: *failure}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return Record{}, &TimeoutError{Target: target, Reached: reached}
			}
			return Record{}, ctx.Err()
		case <-time.After(interval):
		}
	}
}
