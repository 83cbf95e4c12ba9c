package download

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/internal/redact"
)

// ErrStalled is the cause of an attempt whose body delivered no byte for the stall timeout.
var ErrStalled = errors.New("no data received within the stall timeout")

// ErrNoSignature means a signature check was asked for an artifact that has none.
var ErrNoSignature = errors.New("the artifact has no OpenPGP signature")

// StatusError is an HTTP response that is not the artifact.
type StatusError struct {
	URL    string
	Status int
	// RetryAfter is the server's Retry-After, zero when absent.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("GET %s: HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// DigestMismatchError means the downloaded bytes are not the ones the source promised.
type DigestMismatchError struct {
	URL       string
	Want, Got string
	// Recorded is the sha256 the object's x-amz-meta-sha256 metadata records (what `download
	// --upload` writes), "" when the server sent none.
	Recorded string
}

func (e *DigestMismatchError) Error() string {
	msg := fmt.Sprintf("%s: sha256 mismatch: expected %s, downloaded %s", e.URL, e.Want, e.Got)
	switch e.Recorded {
	case "":
		return msg
	case e.Want:
		return msg + "; the object's x-amz-meta-sha256 records the expected digest: its bytes were changed after it was uploaded"
	case e.Got:
		return msg + "; the object's x-amz-meta-sha256 agrees with its bytes: it holds another file than the one expected"
	}
	return msg + "; the object's x-amz-meta-sha256 records a third digest, " + e.Recorded + ": it was changed after it was uploaded"
}

// What a NotInStreamError says is missing.
const (
	MissingArchitecture = "architecture"
	MissingPlatform     = "platform"
	MissingFormat       = "metal format"
)

// NotInStreamError names something a stream lacks, and what it has instead.
type NotInStreamError struct {
	Stream string
	// What is missing: MissingArchitecture, MissingPlatform or MissingFormat; the last two
	// within the architecture Arch.
	What, Arch string
	Want       string
	Have       []string
}

func (e *NotInStreamError) Error() string {
	have := "none"
	if len(e.Have) > 0 {
		have = strings.Join(e.Have, ", ")
	}
	within := ""
	if e.What != MissingArchitecture {
		within = " for " + e.Arch
	}
	return fmt.Sprintf("stream %q has no %s %q%s; it has: %s", e.Stream, e.What, e.Want, within, have)
}

// StreamError means a stream's source could not be read as CoreOS stream metadata.
type StreamError struct {
	Source string
	Err    error
}

func (e *StreamError) Error() string {
	// A URL's password and query (a pre-signed signature) are credentials: never shown.
	if isHTTPURL(e.Source) || isS3URL(e.Source) {
		return fmt.Sprintf("stream %s: %v", redact.URL(e.Source), e.Err)
	}
	// Errors about a file, such as input's refusals, start with its name already.
	if msg := e.Err.Error(); e.Source != "" && strings.HasPrefix(msg, e.Source) {
		return "stream " + msg
	}
	return fmt.Sprintf("stream %s: %v", e.Source, e.Err)
}
func (e *StreamError) Unwrap() error { return e.Err }

// SignatureError means an artifact's OpenPGP signature does not verify with the keyring.
type SignatureError struct {
	URL string
	Err error
}

func (e *SignatureError) Error() string {
	return fmt.Sprintf("%s: OpenPGP signature not valid: %v", e.URL, e.Err)
}
func (e *SignatureError) Unwrap() error { return e.Err }

// TooLargeError is a body that went on past the length its server declared, or past the
// Fetcher's MaxSize when it declared none. Retrying would bring the same.
type TooLargeError struct {
	URL   string
	Limit int64
	// Declared is true when Limit is the server's own length, false when it is MaxSize.
	Declared bool
}

func (e *TooLargeError) Error() string {
	if e.Declared {
		return fmt.Sprintf("GET %s: the body goes on past the %d bytes the server declared", e.URL, e.Limit)
	}
	return fmt.Sprintf("GET %s: the body goes on past %d bytes, the most a download may take", e.URL, e.Limit)
}

// RedirectError is a redirect that is not followed: to a scheme other than http(s), from
// https to http, or one of too many in a row.
type RedirectError struct {
	// From and To are the URLs without their credentials.
	From, To string
	Why      string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("GET %s: redirect to %s not followed: %s", e.From, e.To, e.Why)
}
