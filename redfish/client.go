package redfish

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sno-iso/sno-iso/internal/httpsem"
)

// maxBody bounds what is read of any BMC answer: Redfish resources are a few KiB.
const maxBody = 4 << 20

// Credentials are a BMC account.
type Credentials struct{ Username, Password string }

// Options configure a Client. The zero value of each field has a sensible default.
type Options struct {
	Credentials Credentials
	// TLS verifies the BMC's certificate; nil uses the system roots.
	TLS *tls.Config
	// Trace receives every request and answer, with credentials and tokens redacted.
	Trace io.Writer
	// Progress receives one Event per step.
	Progress func(Event)
	// Retry paces retries of transient failures and polls of changing state.
	Retry Backoff
	// ConnectTimeout and ReadTimeout bound each request (default 10 s and 60 s); the
	// context bounds the whole operation.
	ConnectTimeout, ReadTimeout time.Duration
}

// Client talks to one BMC. Close ends its session.
type Client struct {
	endpoint string
	addr     Address
	opts     Options
	http     *http.Client

	mu         sync.Mutex
	root       *serviceRoot
	token      string // X-Auth-Token of the session, "" with Basic auth
	sessionURL string // the session to delete on Close
	basic      bool
	etags      map[string]string // path → ETag of its last GET
	allow      map[string]string // path → Allow header of its last GET
}

// New returns a client for the BMC at addr; it connects on the first request.
func New(addr Address, opts Options) *Client {
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	if opts.ReadTimeout == 0 {
		opts.ReadTimeout = 60 * time.Second
	}
	opts.Retry = opts.Retry.withDefaults()
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: opts.ConnectTimeout}).DialContext,
		TLSClientConfig:       opts.TLS,
		TLSHandshakeTimeout:   opts.ConnectTimeout,
		ResponseHeaderTimeout: opts.ReadTimeout,
		// Compressed answers come with weak ETags that some BMCs then refuse in If-Match.
		DisableCompression:  true,
		MaxIdleConnsPerHost: 2,
	}
	return &Client{
		endpoint: addr.Endpoint,
		addr:     addr,
		opts:     opts,
		http: &http.Client{
			Transport: transport,
			// A redirect would resend credentials elsewhere; BMCs do not redirect the API.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		etags: map[string]string{},
		allow: map[string]string{},
	}
}

func (c *Client) progress(step Step, format string, args ...any) {
	if c.opts.Progress != nil {
		c.opts.Progress(Event{Step: step, Message: fmt.Sprintf(format, args...)})
	}
}

// request is one call to the BMC.
type request struct {
	method, path string
	body         any
	// ifMatch is sent as If-Match when not empty.
	ifMatch string
	// retryTransient retries a POST or PATCH that the BMC refused as busy.
	retryTransient bool
}

// response is a BMC answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends r with authentication, retries what may be retried, re-authenticates once on a
// 401, follows a task monitor, and turns refusals into *Error.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	resp, err := c.doAuthenticated(ctx, r)
	if err != nil {
		return nil, err
	}
	if resp.status == http.StatusAccepted && resp.header.Get("Location") != "" && r.method != http.MethodGet {
		resp, err = c.followTask(ctx, resp)
		if err != nil {
			return nil, err
		}
	}
	return c.check(r.method, r.path, resp)
}

// doAuthenticated sends r and, if a session token is refused, logs in again once.
func (c *Client) doAuthenticated(ctx context.Context, r request) (*response, error) {
	resp, err := c.doRetrying(ctx, r)
	if err != nil || resp.status != http.StatusUnauthorized {
		return resp, err
	}
	c.mu.Lock()
	session := c.token != ""
	c.mu.Unlock()
	if !session {
		return resp, nil
	}
	// The session expired or was dropped by the BMC: one new login, then the request again.
	c.progress(StepAuth, "session expired: logging in again")
	if err := c.login(ctx); err != nil {
		return nil, err
	}
	return c.doRetrying(ctx, r)
}

// doRetrying sends r, retrying a GET after connection errors and 5xx answers, and a POST or
// PATCH after answers that say the BMC is busy.
func (c *Client) doRetrying(ctx context.Context, r request) (*response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := c.send(ctx, r)
		retry := false
		var wait time.Duration
		switch {
		case err != nil:
			retry = r.method == http.MethodGet && ctx.Err() == nil && attempt < maxConnectionAttempts && !isCertificateError(err)
		case r.method == http.MethodGet:
			retry = resp.status >= 500 && resp.status != http.StatusNotImplemented
		case r.retryTransient:
			retry = isTransient(resp)
		}
		if !retry || attempt >= c.opts.Retry.Attempts {
			return resp, err
		}
		if resp != nil {
			wait, _ = parseRetryAfter(resp.header.Get("Retry-After"), time.Now())
		}
		if wait == 0 || wait > c.opts.Retry.Max {
			wait = c.opts.Retry.delay(attempt)
		}
		if err := httpsem.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// maxConnectionAttempts bounds the tries of a BMC that cannot be reached: a wrong address
// should fail fast, a BMC that drops a connection now and then should not.
const maxConnectionAttempts = 3

// isCertificateError reports whether err is a TLS verification failure, which trying again
// cannot cure.
func isCertificateError(err error) bool {
	var verification *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &verification) || errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

// send performs one HTTP exchange.
func (c *Client) send(ctx context.Context, r request) (*response, error) {
	var body []byte
	if r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.endpoint+r.path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	} else {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("OData-Version", "4.0")
	if r.ifMatch != "" {
		req.Header.Set("If-Match", r.ifMatch)
	}
	c.authorize(req)
	c.traceRequest(req, body)
	resp, err := c.http.Do(req)
	if err != nil {
		c.traceError(err)
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, unwrapURLError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", r.method, r.path, err)
	}
	out := &response{status: resp.StatusCode, header: resp.Header, body: data}
	c.traceResponse(out)
	return out, nil
}

// localPath is the path and query of a Location header. The host of an absolute URL is
// dropped: the client talks to the BMC it was given, whatever a header says.
func localPath(location string) string {
	u, err := url.Parse(strings.TrimSpace(location))
	if err != nil {
		return ""
	}
	if u.Path == "" || u.Path[0] != '/' {
		return ""
	}
	return u.RequestURI()
}

// unwrapURLError drops net/http's "Get \"URL\":" wrapper: the caller names the request.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (c *Client) authorize(req *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.token != "":
		req.Header.Set("X-Auth-Token", c.token)
	case c.basic:
		req.SetBasicAuth(c.opts.Credentials.Username, c.opts.Credentials.Password)
	}
}

// check turns a refusal into *Error and a success into itself.
func (c *Client) check(method, path string, resp *response) (*response, error) {
	if resp.status >= 300 {
		return nil, parseError(method, path, resp.status, resp.body)
	}
	if eb, failed := failedDespiteSuccess(resp.body); failed {
		return nil, &Error{Method: method, Path: path, StatusCode: resp.status, Code: eb.Error.Code, Message: eb.Error.Message,
			ExtendedInfo: eb.Error.ExtendedInfo}
	}
	return resp, nil
}

// get reads the resource at path into v and remembers its ETag and Allow header.
func (c *Client) get(ctx context.Context, path string, v any) error {
	resp, err := c.do(ctx, request{method: http.MethodGet, path: path})
	if err != nil {
		return err
	}
	if err := decodeResource(path, resp, v); err != nil {
		return err
	}
	c.mu.Lock()
	c.etags[path] = resp.header.Get("ETag")
	c.allow[path] = resp.header.Get("Allow")
	c.mu.Unlock()
	return nil
}

// decodeResource parses a JSON resource, telling HTML and other non-Redfish answers apart.
func decodeResource(path string, resp *response, v any) error {
	if ct := resp.header.Get("Content-Type"); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); mt == "text/html" {
			return fmt.Errorf("%w: GET %s answered an HTML page (%s); is the address a Redfish BMC?", ErrNotRedfish, path, excerpt(resp.body))
		}
	}
	trimmed := bytes.TrimSpace(resp.body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("%w: GET %s answered %q, not a JSON object", ErrNotRedfish, path, excerpt(resp.body))
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		return fmt.Errorf("%w: GET %s: %v", ErrNotRedfish, path, err)
	}
	return nil
}

// post sends an action, retrying while the BMC says it is busy.
func (c *Client) post(ctx context.Context, path string, body any) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: path, body: body, retryTransient: true})
	return err
}

// Close logs out of the session, if there is one.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	session := c.sessionURL
	c.sessionURL = ""
	c.mu.Unlock()
	if session == "" {
		return nil
	}
	resp, err := c.send(ctx, request{method: http.MethodDelete, path: session})
	c.mu.Lock()
	c.token = ""
	c.mu.Unlock()
	if err != nil {
		return err
	}
	// 401 and 404: the session expired or was dropped, which is what Close wants.
	if resp.status >= 300 && resp.status != http.StatusNotFound && resp.status != http.StatusUnauthorized {
		return parseError(http.MethodDelete, session, resp.status, resp.body)
	}
	return nil
}
