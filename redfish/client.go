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
	"github.com/sno-iso/sno-iso/internal/redact"
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
	// scrubber finds the secrets for the session token scrubberToken.
	scrubber      *redact.Secrets
	scrubberToken string
	// accepted is set once the BMC answered a request that carried the credentials.
	accepted bool
	// sleep waits between retries and polls; tests record the waits instead.
	sleep func(context.Context, time.Duration) error
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
	c := &Client{
		endpoint: addr.Endpoint,
		addr:     addr,
		opts:     opts,
		etags:    map[string]string{},
		allow:    map[string]string{},
		sleep:    httpsem.Sleep,
	}
	c.http = &http.Client{Transport: transport, CheckRedirect: c.checkRedirect}
	return c
}

// maxRedirects bounds the redirects followed for one request.
const maxRedirects = 5

// checkRedirect follows a 307 or 308 to a path on the same BMC (same scheme, host and
// port), which keeps method, body and credentials; sushy-tools sends one from a System's
// name to its UUID. Any other redirect is not followed: it would send the credentials
// elsewhere or change the method.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	endpoint, err := url.Parse(c.endpoint)
	if err != nil || len(via) > maxRedirects || (status != http.StatusTemporaryRedirect && status != http.StatusPermanentRedirect) ||
		!strings.EqualFold(req.URL.Scheme, endpoint.Scheme) || hostPort(req.URL) != hostPort(endpoint) {
		return http.ErrUseLastResponse
	}
	if c.opts.Trace != nil {
		fmt.Fprintf(c.opts.Trace, "< %d %s\n< Location: %s\n> %s %s (following the redirect)\n",
			status, http.StatusText(status), c.scrub(req.Response.Header.Get("Location")), req.Method, c.scrub(req.URL.String()))
	}
	return nil
}

func (c *Client) progress(step Step, format string, args ...any) {
	if c.opts.Progress != nil {
		c.opts.Progress(Event{Step: step, Message: c.scrub(fmt.Sprintf(format, args...))})
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
	// login is a session login: its body carries the credentials.
	login bool
}

// response is a BMC answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
	// sentCredentials reports whether the request carried a password, a Basic account or
	// a session token.
	sentCredentials bool
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
			retry = r.method == http.MethodGet && ctx.Err() == nil && attempt < maxConnectionAttempts &&
				!isCertificateError(err) && !errors.Is(err, ErrPlainHTTP)
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
		if err := c.sleep(ctx, wait); err != nil {
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
	sent := c.authorize(req)
	if r.login {
		sent = c.opts.Credentials != (Credentials{})
	}
	c.traceRequest(req, body)
	resp, err := c.http.Do(req)
	if err != nil {
		c.traceError(err)
		// net/http replaces the tls.RecordHeaderError of an HTTP answer with its own text.
		var notTLS tls.RecordHeaderError
		if errors.As(err, &notTLS) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
			return nil, fmt.Errorf("%s %s: %w (%v)", r.method, r.path, ErrPlainHTTP, unwrapURLError(err))
		}
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, unwrapURLError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", r.method, r.path, err)
	}
	out := &response{status: resp.StatusCode, header: resp.Header, body: data, sentCredentials: sent}
	c.traceResponse(out)
	if sent && resp.StatusCode < 400 {
		c.mu.Lock()
		c.accepted = true
		c.mu.Unlock()
	}
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

// authorize adds the session token or the Basic account and reports whether it did: no
// account at all sends no Authorization header, so that the BMC can say it wants one.
func (c *Client) authorize(req *http.Request) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.token != "":
		req.Header.Set("X-Auth-Token", c.token)
		return true
	case c.basic && c.opts.Credentials != (Credentials{}):
		req.SetBasicAuth(c.opts.Credentials.Username, c.opts.Credentials.Password)
		return true
	}
	return false
}

// check turns a refusal into *Error, told apart by why authentication failed and with any
// echoed secret taken out, and a success into itself.
func (c *Client) check(method, path string, resp *response) (*response, error) {
	var e *Error
	switch {
	case resp.status >= 300 && resp.status < 400:
		e = &Error{Method: method, Path: path, StatusCode: resp.status,
			Message: fmt.Sprintf("a redirect to %q, which is not a path on this BMC: not followed", resp.header.Get("Location"))}
	case resp.status >= 400:
		e = c.parseRefusal(method, path, resp.status, resp.body)
	default:
		eb, failed := failedDespiteSuccess(resp.body)
		if !failed {
			return resp, nil
		}
		e = &Error{Method: method, Path: path, StatusCode: resp.status, Code: eb.Error.Code, Message: eb.Error.Message,
			ExtendedInfo: eb.Error.ExtendedInfo}
	}
	c.mu.Lock()
	accepted := c.accepted
	c.mu.Unlock()
	e.classifyAuth(resp.sentCredentials, accepted)
	return nil, c.scrubError(e)
}

// parseRefusal reads a refusal with the secrets taken out of the body before it is parsed
// or cut to an excerpt (a cut could keep part of one), and out of the parsed text (JSON
// escapes could spell one).
func (c *Client) parseRefusal(method, path string, status int, body []byte) *Error {
	return c.scrubError(parseError(method, path, status, []byte(c.scrub(string(body)))))
}

// excerpt is excerpt of a body with the secrets taken out.
func (c *Client) excerpt(body []byte) string {
	return c.scrub(excerpt([]byte(c.scrub(string(body)))))
}

// get reads the resource at path into v and remembers its ETag and Allow header.
func (c *Client) get(ctx context.Context, path string, v any) error {
	resp, err := c.do(ctx, request{method: http.MethodGet, path: path})
	if err != nil {
		return err
	}
	if err := c.decodeResource(path, resp, v); err != nil {
		return err
	}
	c.mu.Lock()
	c.etags[path] = resp.header.Get("ETag")
	c.allow[path] = resp.header.Get("Allow")
	c.mu.Unlock()
	return nil
}

// decodeResource parses a JSON resource, telling HTML and other non-Redfish answers apart.
func (c *Client) decodeResource(path string, resp *response, v any) error {
	if ct := resp.header.Get("Content-Type"); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); mt == "text/html" {
			return fmt.Errorf("%w: GET %s answered an HTML page (%s); is the address a Redfish BMC?", ErrNotRedfish, path, c.excerpt(resp.body))
		}
	}
	trimmed := bytes.TrimSpace(resp.body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("%w: GET %s answered %q, not a JSON object", ErrNotRedfish, path, c.excerpt(resp.body))
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		return fmt.Errorf("%w: GET %s: %s", ErrNotRedfish, path, c.scrub(err.Error()))
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
		return c.parseRefusal(http.MethodDelete, session, resp.status, resp.body)
	}
	return nil
}
