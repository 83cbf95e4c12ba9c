package redfishtest

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Config configures a fake BMC.
type Config struct {
	Profile Profile
	// Mockup is a DMTF mockup directory (see MockupDir) to serve instead of the tree the
	// Profile generates; the Profile's deviations still apply.
	Mockup string
	// Username and Password are the account; both empty accepts any request.
	Username, Password string
	// ReadOnlyAccount gives the account a role that may read but not change anything:
	// actions and PATCHes get 403 InsufficientPrivilege.
	ReadOnlyAccount bool
	// PowerOn starts the System powered on (generated trees start off).
	PowerOn bool
	// PowerDelay is how long PoweringOn and PoweringOff last.
	PowerDelay time.Duration
	// FetchDir, when set, makes the virtual CD fetch each inserted image into a file there,
	// as a BMC does; a fetch that fails refuses the insert.
	FetchDir string
	// OnBoot is called when the System powers on into an inserted virtual CD.
	OnBoot func(Boot)
	// MaxRequests bounds the requests answered (default 2000); more get 503.
	MaxRequests int
	// TLS serves HTTPS with a self-signed certificate (see CertificatePEM).
	TLS bool
}

// Boot is one power-on from the virtual CD.
type Boot struct {
	Image string
	// File is the fetched image ("" without FetchDir).
	File string
}

// Request is one request the fake answered.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// BMC is a running fake BMC.
type BMC struct {
	cfg    Config
	server *httptest.Server

	mu        sync.Mutex
	tree      map[string]resource
	actions   map[string]actionRef
	requests  []Request
	sessions  map[string]*session
	nextID    int
	busyUsed  bool
	conflicts int
	stale     map[string]staleView
	tasks     map[string]*task
	fetched   map[string]string // slot path → fetched file
	boots     []Boot
	timers    []*time.Timer
	closed    bool
}

type actionRef struct{ owner, kind string }

type session struct {
	path string
	uses int
}

// staleView is a slot's previous state, shown for a few more reads.
type staleView struct {
	old   resource
	reads int
}

// Start runs a fake BMC on 127.0.0.1 until the test ends.
func Start(t testing.TB, cfg Config) *BMC {
	t.Helper()
	b, err := newBMC(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.start(nil)
	t.Cleanup(b.Close)
	return b
}

// Listen runs a fake BMC on addr (host:port, port 0 for any) outside a test, until Close:
// the fakebmc command, for trying a client without hardware.
func Listen(addr string, cfg Config) (*BMC, error) {
	b, err := newBMC(cfg)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	b.start(l)
	return b, nil
}

func newBMC(cfg Config) (*BMC, error) {
	b := &BMC{cfg: cfg, sessions: map[string]*session{}, stale: map[string]staleView{}, tasks: map[string]*task{},
		fetched: map[string]string{}}
	if b.cfg.MaxRequests == 0 {
		b.cfg.MaxRequests = 2000
	}
	if cfg.Mockup != "" {
		tree, err := loadMockup(cfg.Mockup)
		if err != nil {
			return nil, err
		}
		b.tree = tree
	} else {
		b.tree = generateTree(cfg.Profile)
	}
	b.indexActions()
	if cfg.PowerOn {
		for _, path := range b.systems() {
			b.tree[path]["PowerState"] = "On"
		}
	}
	return b, nil
}

// start serves on l, or on a new 127.0.0.1 port when l is nil.
func (b *BMC) start(l net.Listener) {
	b.server = httptest.NewUnstartedServer(http.HandlerFunc(b.serveHTTP))
	if l != nil {
		b.server.Listener.Close()
		b.server.Listener = l
	}
	// Clients that refuse the certificate are what TLS tests check; no log of it.
	b.server.Config.ErrorLog = log.New(io.Discard, "", 0)
	if b.cfg.TLS {
		b.server.StartTLS()
	} else {
		b.server.Start()
	}
}

// Close stops the fake BMC and its pending power transitions.
func (b *BMC) Close() {
	b.mu.Lock()
	b.closed = true
	for _, tm := range b.timers {
		tm.Stop()
	}
	b.mu.Unlock()
	b.server.Close()
}

// URL is the BMC's address, http://127.0.0.1:PORT (https with TLS).
func (b *BMC) URL() string { return b.server.URL }

// CertificatePEM is the TLS certificate of a TLS fake, for a client's CA file.
func (b *BMC) CertificatePEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.server.Certificate().Raw})
}

// indexActions finds every action target, so a POST can be routed whatever its path.
func (b *BMC) indexActions() {
	b.actions = map[string]actionRef{}
	for path, r := range b.tree {
		acts, _ := r["Actions"].(resource)
		for name, a := range acts {
			if m, ok := a.(resource); ok {
				if target, ok := m["target"].(string); ok {
					b.actions[strings.TrimRight(target, "/")] = actionRef{owner: path, kind: name}
				}
			}
		}
	}
}

func (b *BMC) systems() []string {
	var out []string
	for path, r := range b.tree {
		if t, _ := r["@odata.type"].(string); strings.Contains(t, "ComputerSystem.") && !strings.Contains(t, "Collection") {
			out = append(out, path)
		} else if _, ok := r["PowerState"]; ok && strings.HasPrefix(path, root+"/Systems/") {
			out = append(out, path)
		}
	}
	return out
}

func (b *BMC) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests = append(b.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	if len(b.requests) > b.cfg.MaxRequests {
		b.writeError(w, http.StatusServiceUnavailable, "Test.RequestBudget",
			fmt.Sprintf("the fake BMC answers at most %d requests", b.cfg.MaxRequests))
		return
	}
	path := strings.TrimRight(r.URL.Path, "/")
	if path == "/redfish" {
		writeJSON(w, http.StatusOK, resource{"v1": root + "/"}, nil)
		return
	}
	sessionsPath := b.sessionsPath()
	login := r.Method == http.MethodPost && sessionsPath != "" && path == sessionsPath
	if !(r.Method == http.MethodGet && path == root) && !login && !b.authorized(r) {
		b.refuseUnauthorized(w, r)
		return
	}
	if target, ok := b.aliasTarget(path); ok {
		b.redirectAlias(w, r, target)
		return
	}
	if b.cfg.ReadOnlyAccount && !login && (r.Method == http.MethodPost || r.Method == http.MethodPatch) {
		b.writeError(w, http.StatusForbidden, "Base.1.8.InsufficientPrivilege",
			"There are insufficient privileges for the account or credentials associated with the current session "+
				"to perform the requested operation.")
		return
	}
	switch {
	case login:
		b.login(w, body)
	case r.Method == http.MethodGet:
		b.get(w, path)
	case r.Method == http.MethodDelete && b.sessionByPath(path) != "":
		delete(b.sessions, b.sessionByPath(path))
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost:
		b.post(w, r, path, body)
	case r.Method == http.MethodPatch:
		b.patch(w, r, path, body)
	default:
		b.writeError(w, http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", r.Method+" is not allowed on "+path)
	}
}

func (b *BMC) get(w http.ResponseWriter, path string) {
	if t := b.tasks[path]; t != nil {
		b.pollTask(w, path, t)
		return
	}
	r := b.tree[path]
	if r == nil {
		b.writeError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+path+" was not found.")
		return
	}
	if s, ok := b.stale[path]; ok {
		r = s.old
		if s.reads--; s.reads <= 0 {
			delete(b.stale, path)
		} else {
			b.stale[path] = s
		}
	}
	h := http.Header{"ETag": {b.etag(r)}}
	if b.cfg.Profile.AllowHeader {
		h.Set("Allow", "GET, HEAD")
		if b.patchable(path) {
			h.Set("Allow", "GET, HEAD, PATCH")
		}
	}
	writeJSON(w, http.StatusOK, r, h)
	if _, isSystem := r["Boot"]; isSystem && b.cfg.Profile.DriftingETags {
		reading, _ := r["SensorReading"].(int)
		r["SensorReading"] = reading + 1
	}
}

func (b *BMC) patchable(path string) bool {
	_, isSlot := b.tree[path]["MediaTypes"]
	_, isSystem := b.tree[path]["Boot"]
	return isSlot || isSystem
}

func writeJSON(w http.ResponseWriter, status int, v any, h http.Header) {
	data, _ := json.Marshal(v)
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(status)
	w.Write(data)
}

// generalError is the one code of the GeneralErrorBodies profiles.
const generalError = "Base.1.0.GeneralError"

// errorBody is a Redfish error with one extended message, or the profile's own shape.
func (b *BMC) errorBody(messageID, message string, related ...string) resource {
	if b.cfg.Profile.GeneralErrorBodies {
		// sushy-tools (sushy_tools/emulator/main.py _render_error, templates/error.json):
		// one code for every refusal, the reason only in message, an id-only extended entry.
		return resource{"error": resource{"code": generalError, "message": message,
			"@Message.ExtendedInfo": []any{resource{"@odata.type": "/redfish/v1/$metadata#Message.1.0.0.Message", "MessageId": generalError}}}}
	}
	info := resource{"MessageId": messageID, "Message": message, "Severity": "Critical"}
	if len(related) > 0 {
		info["RelatedProperties"] = toAny(related)
	}
	return resource{"error": resource{"code": messageID, "message": message, "@Message.ExtendedInfo": []any{info}}}
}

func (b *BMC) writeError(w http.ResponseWriter, status int, messageID, message string, related ...string) {
	writeJSON(w, status, b.errorBody(messageID, message, related...), nil)
}

// Requests returns the requests answered so far.
func (b *BMC) Requests() []Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Request(nil), b.requests...)
}

// OpenSessions is how many sessions were created and not deleted.
func (b *BMC) OpenSessions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sessions)
}

// Boots returns the power-ons into the virtual CD so far.
func (b *BMC) Boots() []Boot {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Boot(nil), b.boots...)
}

// Resource returns a copy of the resource at path as the client would read it now.
func (b *BMC) Resource(path string) map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out map[string]any
	data, _ := json.Marshal(b.tree[strings.TrimRight(path, "/")])
	json.Unmarshal(data, &out)
	return out
}

// SystemPath is the path of the (first) System.
func (b *BMC) SystemPath() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	members, _ := b.tree[root+"/Systems"]["Members"].([]any)
	if len(members) == 0 {
		return ""
	}
	path, _ := members[0].(resource)["@odata.id"].(string)
	return path
}
