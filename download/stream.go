package download

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/coreos/stream-metadata-go/stream"
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

func readStreamFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no such file, and not a stream name (%s) nor an http(s) URL", strings.Join(FedoraStreams, ", "))
	}
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if st.Size() > maxStreamSize {
		return nil, fmt.Errorf("%d bytes is too large for stream metadata", st.Size())
	}
	return os.ReadFile(path)
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
