package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// statusError is an answer other than the file: its status, the error for the log and what
// the client is told.
type statusError struct {
	status int
	err    error
	// public is the response body; empty when err's text is fit for any client (it names
	// no server path, no file contents).
	public string
	// retryAfter, in seconds, is sent as Retry-After when not 0.
	retryAfter int
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

func (e *statusError) body() string {
	if e.public != "" {
		return e.public
	}
	return e.err.Error()
}

func notFound(format string, args ...any) error {
	return &statusError{status: http.StatusNotFound, err: fmt.Errorf(format, args...)}
}

// failed is a 500 saying what class of problem the ISO or the node's files have, the details
// (paths, what in a file is wrong) going to the log only; or a 502 or 504 when the ISO's
// origin failed.
func failed(err error) error {
	var se *statusError
	if err == nil || errors.As(err, &se) {
		return err
	}
	if err = originStatus(err); errors.As(err, &se) {
		return err
	}
	return &statusError{status: http.StatusInternalServerError, err: err,
		public: "cannot serve this file: " + problemClass(err) + "; the server's log says why"}
}

// problemClass says what kind of problem err is in words fit for any client: no path, no
// file contents, nothing of a node's config (which is a secret).
func problemClass(err error) string {
	var tooLarge *isobuilder.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return "the node's config is too large for the ISO's Ignition area"
	case errors.Is(err, isobuilder.ErrNoNetworkSupport):
		return "the ISO cannot carry the node's network keyfiles"
	case errors.Is(err, isobuilder.ErrCustomized):
		return "the ISO already carries customizations"
	case errors.Is(err, input.ErrNotRegular), errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return "a file of the node cannot be read"
	}
	return "the node's files or the ISO cannot be used"
}
