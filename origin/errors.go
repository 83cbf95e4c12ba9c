package origin

import (
	"context"
	"errors"
	"fmt"
	"net"
)

var (
	// ErrNotHTTP says the URL is neither an http or https URL with a host nor s3://BUCKET/KEY.
	ErrNotHTTP = errors.New("not an http://, https:// or s3:// URL")
	// ErrNoRanges says the origin sent the whole object for a Range request.
	ErrNoRanges = errors.New("the origin does not answer Range requests")
	// ErrChanged says the object at the origin is no longer the version that was opened.
	ErrChanged = errors.New("the object changed at the origin")
	// ErrStatus says the origin answered with an error status.
	ErrStatus = errors.New("unexpected status")
	// ErrNoValidator says the origin names no version of the object: with neither a strong
	// ETag nor Last-Modified, a replaced object could not be told from the opened one.
	ErrNoValidator = errors.New("the origin sends neither a strong ETag nor Last-Modified, so a replaced object " +
		"could not be told apart from the one opened")
	// ErrBadResponse says the origin's answer does not describe the bytes asked for.
	ErrBadResponse = errors.New("malformed answer")
)

// Error is a failed request to the origin. URL has no query or user info.
type Error struct {
	URL    string
	Status int // 0 when no response arrived
	Err    error
}

func (e *Error) Error() string { return fmt.Sprintf("origin %s: %v", e.URL, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Timeout reports whether the origin did not answer in time (a gateway would say 504).
func (e *Error) Timeout() bool {
	var ne net.Error
	return errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, context.Canceled) && e.Status == 0 ||
		errors.As(e.Err, &ne) && ne.Timeout()
}
