package download

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/coreos/stream-metadata-go/stream"
	"github.com/sno-iso/sno-iso/internal/input"
)

// FedoraStreams are the stream names LoadStream fetches from Fedora CoreOS.
var FedoraStreams = []string{"stable", "testing", "next"}

// fedoraStreamBase is where Fedora CoreOS publishes its streams as NAME.json.
const fedoraStreamBase = "https://builds.coreos.fedoraproject.org/streams/"

// maxStreamSize bounds a stream JSON read into memory; real ones are well under 1 MiB.
const maxStreamSize = 16 << 20

// LoadStream reads stream metadata from source: a Fedora CoreOS stream name (FedoraStreams),
// an http(s) URL, or a file (such as what `openshift-install coreos print-stream-json`
// prints). URLs are fetched with f, retrying as it does.
func (f *Fetcher) LoadStream(ctx context.Context, source string) (*stream.Stream, error) {
	var (
		data []byte
		err  error
	)
	switch {
	case slices.Contains(FedoraStreams, source):
		data, err = f.Get(ctx, f.fedoraBase()+source+".json", maxStreamSize)
	case isHTTPURL(source):
		data, err = f.Get(ctx, source, maxStreamSize)
	default:
		data, err = readStreamFile(source)
	}
	if err != nil {
		return nil, &StreamError{Source: source, Err: err}
	}
	s, err := ParseStream(data)
	if err != nil {
		return nil, &StreamError{Source: source, Err: err}
	}
	return s, nil
}

func (f *Fetcher) fedoraBase() string {
	if f.streamBase != "" {
		return f.streamBase
	}
	return fedoraStreamBase
}

// readStreamFile reads a regular file, or a pipe the shell names through a descriptor, such
// as its <(openshift-install ...); a named pipe is refused, not waited on.
func readStreamFile(path string) ([]byte, error) {
	data, err := input.ReadFile(path, maxStreamSize, "stream metadata")
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no such file, and not a stream name (%s) nor an http(s) URL", strings.Join(FedoraStreams, ", "))
	}
	return data, err
}

// ReadStream reads stream metadata from r, such as a pipe from `openshift-install coreos
// print-stream-json`.
func ReadStream(r io.Reader) (*stream.Stream, error) {
	data, err := readLimited(r)
	if err != nil {
		return nil, err
	}
	return ParseStream(data)
}

func readLimited(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxStreamSize+1))
	if err == nil && len(data) > maxStreamSize {
		err = fmt.Errorf("more than %d bytes: too large for stream metadata", maxStreamSize)
	}
	return data, err
}

// ParseStream decodes stream metadata and checks that it is one: it names architectures.
func ParseStream(data []byte) (*stream.Stream, error) {
	var s stream.Stream
	if err := json.Unmarshal(data, &s); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, fmt.Errorf("not valid JSON at byte %d: %v", syntax.Offset, err)
		}
		return nil, fmt.Errorf("not CoreOS stream metadata: %v", err)
	}
	if len(s.Architectures) == 0 {
		return nil, errors.New(`not CoreOS stream metadata: no "architectures"`)
	}
	return &s, nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// isS3URL reports whether s is s3://BUCKET/KEY, which a Fetcher reads when its client's
// transport has S3 registered (origin.S3RoundTripper).
func isS3URL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "s3" && u.Host != "" && len(u.Path) > 1
}
