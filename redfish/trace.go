package redfish

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/sno-iso/sno-iso/internal/redact"
)

// redacted replaces secrets in traces.
const redacted = "<redacted>"

// secretHeaders are never traced as they are.
var secretHeaders = map[string]bool{"Authorization": true, "X-Auth-Token": true, "Cookie": true, "Set-Cookie": true}

// secretFields are JSON members whose values are never traced (session logins; the
// UserName/Password of an insert ladder).
var secretFields = map[string]bool{"Password": true, "UserName": true, "Token": true}

func (c *Client) traceRequest(req *http.Request, body []byte) {
	if c.opts.Trace == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "> %s %s\n", req.Method, req.URL)
	writeHeaders(&b, "> ", req.Header)
	if len(body) > 0 {
		fmt.Fprintf(&b, "> %s\n", redactJSON(body))
	}
	fmt.Fprint(c.opts.Trace, c.scrub(b.String()))
}

func (c *Client) traceResponse(resp *response) {
	if c.opts.Trace == nil {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "< %d %s\n", resp.status, http.StatusText(resp.status))
	writeHeaders(&b, "< ", resp.header)
	if len(resp.body) > 0 {
		fmt.Fprintf(&b, "< %s\n", redactJSON([]byte(c.scrub(string(resp.body)))))
	}
	fmt.Fprint(c.opts.Trace, c.scrub(b.String()))
}

func (c *Client) traceError(err error) {
	if c.opts.Trace != nil {
		fmt.Fprintf(c.opts.Trace, "< error: %s\n", c.scrub(err.Error()))
	}
}

// secrets finds what no message or trace may show: the password, in each form a BMC may echo
// it (redact.Secrets), inside a Basic Authorization value too, and the session token. The
// username is not secret and stays. It is made again when the token changes.
func (c *Client) secrets() *redact.Secrets {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scrubber == nil || c.scrubberToken != c.token {
		creds := c.opts.Credentials
		secrets := []string{creds.Password, c.token}
		if creds.Password != "" {
			secrets = append(secrets, creds.Username+":"+creds.Password) // base64 in a Basic value
		}
		c.scrubber, c.scrubberToken = redact.NewSecrets(secrets...), c.token
	}
	return c.scrubber
}

// scrub replaces every secret in s.
func (c *Client) scrub(s string) string { return c.secrets().Replace(s, redacted) }

// scrubError takes the secrets out of what a BMC said in a refusal.
func (c *Client) scrubError(e *Error) *Error {
	e.Code, e.Message = c.scrub(e.Code), c.scrub(e.Message)
	info := make([]Message, len(e.ExtendedInfo))
	for i, m := range e.ExtendedInfo {
		m.MessageID, m.Message = c.scrub(m.MessageID), c.scrub(m.Message)
		related := make([]string, len(m.RelatedProperties))
		for j, p := range m.RelatedProperties {
			related[j] = c.scrub(p)
		}
		m.RelatedProperties = related
		info[i] = m
	}
	e.ExtendedInfo = info
	return e
}

func writeHeaders(b *strings.Builder, prefix string, h http.Header) {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		value := strings.Join(h[name], ", ")
		if secretHeaders[http.CanonicalHeaderKey(name)] {
			value = redacted
		}
		fmt.Fprintf(b, "%s%s: %s\n", prefix, name, value)
	}
}

// redactJSON returns a JSON body with secret members replaced, compacted to one line; a body
// that is not JSON is shown as an excerpt.
func redactJSON(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return excerpt(body)
	}
	redactValue(v)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return redacted
	}
	return strings.TrimSpace(out.String())
}

func redactValue(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if secretFields[k] {
				v[k] = redacted
				continue
			}
			redactValue(x)
		}
	case []any:
		for _, x := range v {
			redactValue(x)
		}
	}
}
