package download

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
)

// transportError is a request or body that failed on the way: worth another attempt.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// errRangeRejected is an answer to a resumed request that cannot be appended: the part was
// emptied and the next attempt, at once, asks for the whole file.
var errRangeRejected = errors.New("the server's partial response does not continue the download; starting over")

// retryable reports whether the status may go away by itself: a timeout, rate limiting or a
// server error. Other client errors (404, 403, ...) will not.
func (e *StatusError) retryable() bool {
	return e.Status == http.StatusRequestTimeout || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// permanent reports whether a request that got no response would fail the same way next
// time: a name that does not exist, a refused connection to this very machine (nothing
// listens), a certificate that does not verify.
func permanent(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return true
	}
	var tlsErr *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	if errors.As(err, &tlsErr) || errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) {
		return true
	}
	var op *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) && errors.As(err, &op) {
		if tcp, ok := op.Addr.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
			return true
		}
	}
	return false
}

// retryWait says whether err is worth another attempt, and after how long.
func (f *Fetcher) retryWait(err error, failures int) (time.Duration, bool) {
	var transport *transportError
	var status *StatusError
	switch {
	case errors.Is(err, errRangeRejected):
		return 0, true
	case errors.As(err, &transport):
		if permanent(transport.err) {
			return 0, false
		}
		// A connection lost or stalled: back off below.
	case errors.As(err, &status) && status.retryable():
		if status.RetryAfter > 0 {
			return min(status.RetryAfter, f.MaxRetryAfter), true
		}
	default:
		return 0, false
	}
	return httpsem.Backoff(f.Backoff, f.MaxBackoff, failures), true
}
