package capability

import (
	"crypto/hmac"
	"sync"
	"time"

	"github.com/sno-iso/sno-iso/internal/filestamp"
)

// Source is a server's secret, read again when its file changes so that every server sharing
// the file follows a rotation without a restart. It is safe for concurrent use.
type Source struct {
	path  string
	grace time.Duration // for a replaced file that does not name the key it replaced

	mu      sync.Mutex
	stamp   filestamp.Stamp
	secret  *Secret
	badFile filestamp.Stamp // the version that could not be used, reported once
}

// OpenSource reads the secret file at path; when create, a missing file is created with a new
// key (created says so), else it is an error wrapping ErrNoSecret. grace is how long the key
// of a file replaced by one that does not name it (a file written by hand, not by
// RotateSecretFile) keeps working.
func OpenSource(path string, create bool, grace time.Duration) (src *Source, created bool, err error) {
	src = &Source{path: path, grace: grace}
	// Stamped before reading: a change in between is read again on the first request.
	src.stamp = filestamp.Of(path)
	if create {
		src.secret, created, err = LoadOrCreateSecret(path)
	} else {
		src.secret, err = ReadSecretFile(path)
	}
	if err != nil {
		return nil, false, err
	}
	return src, created, nil
}

// Path is the secret file's.
func (src *Source) Path() string { return src.path }

// Current returns the secret, reading the file again first if it changed. A file that became
// unusable leaves the last good secret in force; problem is what to log, once.
func (src *Source) Current(now time.Time) (s *Secret, problem error) {
	st := filestamp.Of(src.path)
	src.mu.Lock()
	defer src.mu.Unlock()
	if st.Same(src.stamp) || st.Same(src.badFile) {
		return src.secret, nil
	}
	next, err := ReadSecretFile(src.path)
	if err != nil {
		src.badFile = st
		return src.secret, err
	}
	if next.Previous == nil && src.grace > 0 && !hmac.Equal(next.Key, src.secret.Key) {
		// Replaced by hand: honour the key it replaced for the grace period.
		next.Previous, next.PreviousUntil = src.secret.Key, now.Add(src.grace)
	}
	src.secret, src.stamp, src.badFile = next, st, filestamp.Stamp{}
	return next, nil
}
