package redfish

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/redfish/redfishtest"
)

const (
	testUser     = "root"
	testPassword = "s3cret-calvin"
	testImage    = "http://192.0.2.1:8080/sno.iso"
)

// fastRetry keeps retries and polls to milliseconds.
var fastRetry = Backoff{Base: time.Millisecond, Max: 4 * time.Millisecond, Poll: time.Millisecond}

// eventLog collects a client's progress events.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.events {
		b.WriteString(string(e.Step) + ": " + e.Message + "\n")
	}
	return b.String()
}

// startBMC runs a fake BMC with the test account and a short power delay.
func startBMC(t *testing.T, cfg redfishtest.Config) *redfishtest.BMC {
	t.Helper()
	cfg.Username, cfg.Password = testUser, testPassword
	if cfg.PowerDelay == 0 {
		cfg.PowerDelay = 5 * time.Millisecond
	}
	return redfishtest.Start(t, cfg)
}

// newClient connects to the fake with the test account; Close runs at the end of the test.
func newClient(t *testing.T, bmc *redfishtest.BMC, events *eventLog, trace *strings.Builder) *Client {
	t.Helper()
	addr, err := ParseAddress(bmc.URL())
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Credentials: Credentials{Username: testUser, Password: testPassword}, Retry: fastRetry}
	if events != nil {
		opts.Progress = events.add
	}
	if trace != nil {
		opts.Trace = trace
	}
	c := New(addr, opts)
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// requestsTo returns the requests with method to paths ending in suffix.
func requestsTo(bmc *redfishtest.BMC, method, suffix string) []redfishtest.Request {
	var out []redfishtest.Request
	for _, r := range bmc.Requests() {
		if r.Method == method && strings.HasSuffix(strings.TrimRight(r.Path, "/"), suffix) {
			out = append(out, r)
		}
	}
	return out
}
