package serve

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// fetchLog remembers who downloaded each ISO, so that the index page can show that a BMC
// fetched a node's media: BMCs fetch an ISO in one GET or in many Range reads.
type fetchLog struct {
	mu     sync.Mutex
	byPath map[string]*isoFetches
}

type isoFetches struct {
	clients  []string
	requests int
	bytes    int64
	last     time.Time
}

// record counts a successful GET of an ISO; path is what the request stands for, without a
// token, as the index page shows the log to every client.
func (f *fetchLog) record(r *http.Request, path string, status int, written int64, now time.Time) {
	if r.Method != http.MethodGet || (status != http.StatusOK && status != http.StatusPartialContent) || !strings.HasSuffix(path, ".iso") {
		return
	}
	client, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		client = r.RemoteAddr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byPath == nil {
		f.byPath = map[string]*isoFetches{}
	}
	e := f.byPath[path]
	if e == nil {
		e = &isoFetches{}
		f.byPath[path] = e
	}
	if !slices.Contains(e.clients, client) {
		e.clients = append(e.clients, client)
	}
	e.requests++
	e.bytes += written
	e.last = now
}

// describe says who fetched path, or "" when nobody did.
func (f *fetchLog) describe(path string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.byPath[path]
	if e == nil {
		return ""
	}
	return fmt.Sprintf("%s by %s: %d bytes in %d requests, last at %s",
		path[1:], strings.Join(e.clients, ", "), e.bytes, e.requests, e.last.UTC().Format(time.TimeOnly+"Z"))
}
