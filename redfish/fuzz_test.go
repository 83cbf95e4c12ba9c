package redfish

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// Everything a BMC sends is untrusted: resources, error bodies, Retry-After, Location and
// ETag headers. The fuzz targets check that none of it panics and that the parsers keep
// their promises; seeds are in testdata/fuzz.

func FuzzParseAddress(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(a.Endpoint, "https://") && !strings.HasPrefix(a.Endpoint, "http://") {
			t.Fatalf("ParseAddress(%q) endpoint %q", s, a.Endpoint)
		}
		if a.SystemPath != "" && !strings.HasPrefix(a.SystemPath, systemsPrefix) {
			t.Fatalf("ParseAddress(%q) system %q", s, a.SystemPath)
		}
	})
}

func FuzzParseError(f *testing.F) {
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := parseError("POST", "/x", status, body)
		if e.Error() == "" {
			t.Fatal("empty message")
		}
		e.mentions("TransferMethod", "SYS518")
		isTransient(&response{status: status, body: body})
		failedDespiteSuccess(body)
	})
}

func FuzzLocation(f *testing.F) {
	f.Fuzz(func(t *testing.T, location string) {
		p := localPath(location)
		if p != "" && p[0] != '/' {
			t.Fatalf("localPath(%q) = %q: not a path on the BMC", location, p)
		}
	})
}

func FuzzIfMatchLadder(f *testing.F) {
	f.Fuzz(func(t *testing.T, etag string) {
		tries := ifMatchLadder(etag)
		if len(tries) == 0 || len(tries) > 3 || tries[0] != strings.TrimSpace(etag) {
			t.Fatalf("ifMatchLadder(%q) = %q", etag, tries)
		}
		if etag := strings.TrimSpace(etag); etag != "" && tries[len(tries)-1] != "" {
			t.Fatalf("ifMatchLadder(%q) = %q: does not end without If-Match", etag, tries)
		}
		for _, x := range tries[1:] {
			if strings.HasPrefix(x, "W/") {
				t.Fatalf("ifMatchLadder(%q) = %q: weak after the first", etag, tries)
			}
		}
	})
}

// FuzzResources decodes a body as each resource the client reads and uses the result as
// the client would.
func FuzzResources(f *testing.F) {
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		resp := &response{status: 200, header: http.Header{"Content-Type": {contentType}}, body: body}
		c := New(Address{Endpoint: "http://127.0.0.1"}, Options{})
		var root serviceRoot
		c.decodeResource("/", resp, &root)
		var sys System
		if c.decodeResource("/s", resp, &sys) == nil {
			cdTarget(sys.Boot.AllowedTargets)
		}
		var s Slot
		if c.decodeResource("/m", resp, &s) == nil {
			s.TakesCD()
			s.Holds(testImage)
			s.patchable()
			cdSlots([]*Slot{&s}, "")
		}
		var info actionInfo
		c.decodeResource("/a", resp, &info)
		var tk task
		c.decodeResource("/t", resp, &tk)
		redactJSON(body)
		// A trace of a JSON body shows it whole but for the value of every secret field, at
		// any depth: the same value as the body's with those replaced.
		var in, out any
		if json.Unmarshal(body, &in) == nil {
			if err := json.Unmarshal([]byte(redactJSON(body)), &out); err != nil {
				t.Fatalf("the trace of a JSON body is not JSON: %v", err)
			}
			if want := withSecretsReplaced(in); !reflect.DeepEqual(out, want) {
				t.Fatalf("trace of %s:\n got %v\nwant %v", body, out, want)
			}
		}
	})
}

// withSecretsReplaced is v with the value of every secret field replaced by the redaction
// marker, written apart from redactJSON.
func withSecretsReplaced(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if secretFields[k] {
				out[k] = redacted
			} else {
				out[k] = withSecretsReplaced(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withSecretsReplaced(x)
		}
		return out
	}
	return v
}

// FuzzScrub: whatever a BMC answers, with the password echoed anywhere in it (PW as sent,
// EPW JSON-escaped), neither the refusal nor the trace shows the password. The password
// starts with a control character, so that the client's own words cannot spell it, and
// has no < or >, so that the <redacted> marker beside other text cannot either.
func FuzzScrub(f *testing.F) {
	f.Add("s3cret-calvin", []byte(`{"error":{"code":"X","message":"bad password PW for root"}}`))
	f.Add(`q"uo\te`, []byte(`{"error":{"message":"EPW"},"x":"`+strings.Repeat("y", 110)+`PW"}`))
	f.Add("calvin", []byte("<html>"+strings.Repeat("a ", 58)+"PW</html>"))
	f.Fuzz(func(t *testing.T, password string, template []byte) {
		if strings.ContainsAny(password, "<>") {
			return
		}
		password = "\x01" + password
		escaped, _ := json.Marshal(password)
		body := bytes.ReplaceAll(bytes.ReplaceAll(template, []byte("PW"), []byte(password)), []byte("EPW"), escaped[1:len(escaped)-1])
		c := New(Address{Endpoint: "http://127.0.0.1"}, Options{Credentials: Credentials{Username: "root", Password: password}})
		var trace strings.Builder
		c.opts.Trace = &trace
		e := c.parseRefusal("POST", "/x", 400, body)
		c.traceResponse(&response{status: 400, body: body})
		var resource map[string]any
		decodeErr := c.decodeResource("/x", &response{status: 200, header: http.Header{}, body: body}, &resource)
		texts := []string{e.Code, e.Message, trace.String()}
		if decodeErr != nil {
			texts = append(texts, decodeErr.Error())
		}
		for _, m := range e.ExtendedInfo {
			texts = append(texts, m.MessageID, m.Message, strings.Join(m.RelatedProperties, " "))
		}
		for _, text := range texts {
			if strings.Contains(text, password) {
				t.Fatalf("password %q shown in %q", password, text)
			}
		}
	})
}
