package serve

import (
	"fmt"
	"time"

	"github.com/sno-iso/sno-iso/internal/presign"
	"github.com/sno-iso/sno-iso/internal/redact"
)

const (
	// presignedWarnWithin is how close to its expiry a pre-signed ISO URL is warned of at start.
	presignedWarnWithin = 48 * time.Hour
	// presignedReadyMargin is how long before its URL expires the server stops being ready:
	// time for a rollout to replace the URL before the replicas fail their downloads.
	presignedReadyMargin = 10 * time.Minute
)

// presignedURL is the expiry of a pre-signed ISO URL.
type presignedURL struct {
	display string // the URL without its query
	expiry  presign.Expiry
}

// watchPresigned reads when the ISO's URL expires, if it is pre-signed: it warns at start when
// that is near, and keeps the metric of the seconds left and the readiness check.
func (s *Server) watchPresigned(now time.Time) {
	if !isURL(s.cfg.ISO) {
		return
	}
	exp, ok, err := presign.Expires(s.cfg.ISO)
	display := redact.URL(s.cfg.ISO)
	if err != nil {
		s.log.Printf("warning: cannot tell when the pre-signed URL %s expires: %v", display, err)
		return
	}
	if !ok {
		return
	}
	s.presigned = &presignedURL{display: display, expiry: exp}
	s.metrics.watchURLExpiry(exp.At)
	if left := exp.At.Sub(now); left < presignedWarnWithin {
		when := "expires at " + exp.At.UTC().Format(time.RFC3339) + " (in " + left.Round(time.Minute).String() + ")"
		if left <= 0 {
			when = "expired at " + exp.At.UTC().Format(time.RFC3339)
		}
		s.log.Printf("warning: the pre-signed URL of the ISO %s %s; the server is not ready from %s before: give it a fresh URL, "+
			"or an s3:// URL with credentials, which do not expire", display, when, presignedReadyMargin)
	}
}

// ready says why the server is not ready when its ISO's pre-signed URL expires
// within presignedReadyMargin.
func (p *presignedURL) ready(now time.Time) error {
	if p == nil {
		return nil
	}
	left := p.expiry.At.Sub(now)
	if left > presignedReadyMargin {
		return nil
	}
	if left <= 0 {
		return fmt.Errorf("the pre-signed URL of the ISO %s expired at %s: give the server a fresh URL or an s3:// URL with credentials",
			p.display, p.expiry.At.UTC().Format(time.RFC3339))
	}
	return fmt.Errorf("the pre-signed URL of the ISO %s expires at %s (in %s): give the server a fresh URL or an s3:// URL with credentials",
		p.display, p.expiry.At.UTC().Format(time.RFC3339), left.Round(time.Second))
}
