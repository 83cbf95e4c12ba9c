package download

import (
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"strings"
)

// sink receives a body; a download that must start over from byte 0 restarts it.
type sink interface {
	io.Writer
	restart() error
	// begin is told the validator and the headers of the response whose body follows.
	begin(validator string, header http.Header) error
}

type fileSink struct {
	file          *os.File
	hash          hash.Hash
	saveValidator func(string) error
	// recorded is the x-amz-meta-sha256 of the last response, "" without one.
	recorded string
}

// sha256Header carries an S3 object's SHA256Metadata.
const sha256Header = "X-Amz-Meta-" + SHA256Metadata

func (s *fileSink) begin(validator string, header http.Header) error {
	s.recorded = ""
	if sum := strings.ToLower(header.Get(sha256Header)); IsSHA256(sum) {
		s.recorded = sum
	}
	if s.saveValidator == nil {
		return nil
	}
	return s.saveValidator(validator)
}

func (s *fileSink) Write(p []byte) (int, error) {
	n, err := s.file.Write(p)
	s.hash.Write(p[:n])
	return n, err
}

func (s *fileSink) restart() error {
	s.hash.Reset()
	if err := s.file.Truncate(0); err != nil {
		return err
	}
	_, err := s.file.Seek(0, io.SeekStart)
	return err
}

type memorySink struct {
	data  []byte
	limit int64
	url   string
}

func (s *memorySink) Write(p []byte) (int, error) {
	if int64(len(s.data)+len(p)) > s.limit {
		return 0, fmt.Errorf("%s: larger than %d bytes", s.url, s.limit)
	}
	s.data = append(s.data, p...)
	return len(p), nil
}

func (s *memorySink) restart() error {
	s.data = s.data[:0]
	return nil
}

func (s *memorySink) begin(string, http.Header) error { return nil }
