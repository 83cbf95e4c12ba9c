package download

import "time"

// Progress hears about downloads as they happen; the command line draws it. Calls come from
// the goroutine that called the Fetcher or Cache.
type Progress interface {
	// Start reports a response that is being received: have bytes are already held (a
	// resumed download), total is the file's size, -1 when the server did not say.
	Start(url string, have, total int64)
	// Update reports the bytes held so far.
	Update(have int64)
	// Retry reports a failed attempt and the wait before the next one.
	Retry(url string, err error, wait time.Duration)
	// Wait reports that another process holds the lock on the cache entry at path.
	Wait(path string)
}

// silent is the Progress of a Fetcher that was given none.
type silent struct{}

func (silent) Start(string, int64, int64)         {}
func (silent) Update(int64)                       {}
func (silent) Retry(string, error, time.Duration) {}
func (silent) Wait(string)                        {}
