package s3test

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
)

// STS is a fake AWS STS on 127.0.0.1 (TLS, with httptest's certificate) that answers
// AssumeRoleWithWebIdentity as the STS API reference (API_AssumeRoleWithWebIdentity, and its
// Common Errors) describes it: a form-encoded POST with Action=AssumeRoleWithWebIdentity,
// Version=2011-06-15, RoleArn, RoleSessionName and WebIdentityToken; an
// AssumeRoleWithWebIdentityResponse with the Credentials (AccessKeyId, SecretAccessKey,
// SessionToken, Expiration) back; an ErrorResponse otherwise: InvalidIdentityToken (400) for
// a token it does not accept, AccessDenied (403) for another role, MissingParameter (400).
//
// The store accepts the key pairs it hands out because they are identities of its own
// (Store.Session): SeaweedFS checks the signature of a request with a session token and an
// access key it knows, and ignores the token (it validates X-Amz-Security-Token only for
// keys it does not know, as its own STS issues them), so the token is signed and sent but
// not judged by the store.
type STS struct {
	// URL is the endpoint, https://127.0.0.1:PORT; Certificate's CA pool trusts it.
	URL    string
	Server *httptest.Server

	roleARN, session, tokenFile string
	lifetime                    time.Duration
	maxRequests                 int

	mu       sync.Mutex
	requests int
	grants   map[string]Keys // the tokens it accepts, and the keys each gets
	received []string        // every token it was sent, in order
	expires  time.Time       // the latest Expiration it handed out
}

// StartSTS starts a fake STS for t that grants roleARN to the session session for the tokens
// of grants, each its own keys, valid for lifetime, and fails t beyond maxRequests requests.
// tokenFile is the web identity token file: a token sent that is not the file's content
// when it arrives fails t (the SDK must read the file again for every request, as projected
// service account tokens rotate).
func StartSTS(t testing.TB, roleARN, session, tokenFile string, lifetime time.Duration, maxRequests int, grants map[string]Keys) *STS {
	s := &STS{roleARN: roleARN, session: session, tokenFile: tokenFile, lifetime: lifetime, maxRequests: maxRequests, grants: grants}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(t, w, r) }))
	s.URL = s.Server.URL
	t.Cleanup(s.Server.Close)
	return s
}

// Received is every token the STS was sent, in order.
func (s *STS) Received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.received...)
}

// Expires is the latest Expiration the STS handed out; zero before it handed out any.
func (s *STS) Expires() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.expires
}

func (s *STS) serve(t testing.TB, w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.requests++; s.requests > s.maxRequests {
		t.Errorf("fake STS: more than %d requests", s.maxRequests)
		stsError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "too many requests for this test")
		return
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("fake STS: %s with Content-Type %q, want a form-encoded POST", r.Method, r.Header.Get("Content-Type"))
		stsError(w, http.StatusBadRequest, "InvalidAction", "want a form-encoded POST")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		stsError(w, http.StatusBadRequest, "MalformedQueryString", err.Error())
		return
	}
	if r.PostForm.Get("Action") != "AssumeRoleWithWebIdentity" || r.PostForm.Get("Version") != "2011-06-15" {
		t.Errorf("fake STS: Action %q Version %q", r.PostForm.Get("Action"), r.PostForm.Get("Version"))
		stsError(w, http.StatusBadRequest, "InvalidAction", "only AssumeRoleWithWebIdentity of 2011-06-15")
		return
	}
	token := r.PostForm.Get("WebIdentityToken")
	s.received = append(s.received, token)
	if current, err := os.ReadFile(s.tokenFile); err != nil || string(current) != token {
		t.Errorf("fake STS: sent a token that is not the token file's content now (%v)", err)
	}
	if r.PostForm.Get("RoleSessionName") != s.session {
		t.Errorf("fake STS: RoleSessionName %q, want AWS_ROLE_SESSION_NAME's %q", r.PostForm.Get("RoleSessionName"), s.session)
		stsError(w, http.StatusBadRequest, "MissingParameter", "RoleSessionName is not the one the test set")
		return
	}
	if r.PostForm.Get("RoleArn") != s.roleARN {
		stsError(w, http.StatusForbidden, "AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity")
		return
	}
	keys, ok := s.grants[token]
	if !ok {
		stsError(w, http.StatusBadRequest, "InvalidIdentityToken", "Incorrect token audience")
		return
	}
	s.expires = time.Now().Add(s.lifetime).UTC().Truncate(time.Second)
	type credentials struct {
		AccessKeyID     string `xml:"AccessKeyId"`
		SecretAccessKey string
		SessionToken    string
		Expiration      string
	}
	var resp struct {
		XMLName xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ AssumeRoleWithWebIdentityResponse"`
		Result  struct {
			Credentials     credentials
			AssumedRoleUser struct{ Arn, AssumedRoleID string }
			Audience        string
		} `xml:"AssumeRoleWithWebIdentityResult"`
		RequestID string `xml:"ResponseMetadata>RequestId"`
	}
	resp.Result.Credentials = credentials{keys.AccessKeyID, keys.SecretAccessKey,
		fmt.Sprintf("session-token-%d", len(s.received)), s.expires.Format(time.RFC3339)}
	resp.Result.AssumedRoleUser.Arn = "arn:aws:sts::123456789012:assumed-role/sno-iso/" + s.session
	resp.Result.AssumedRoleUser.AssumedRoleID = "AROAEXAMPLE:" + s.session
	resp.Result.Audience = "sts.amazonaws.com"
	resp.RequestID = fmt.Sprint(len(s.received))
	w.Header().Set("Content-Type", "text/xml")
	xml.NewEncoder(w).Encode(resp)
}

func stsError(w http.ResponseWriter, status int, code, message string) {
	var resp struct {
		XMLName xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ ErrorResponse"`
		Error   struct{ Type, Code, Message string }
		// RequestID names the failed request in AWS's answers.
		RequestID string `xml:"RequestId"`
	}
	resp.Error.Type, resp.Error.Code, resp.Error.Message, resp.RequestID = "Sender", code, message, "error"
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	xml.NewEncoder(w).Encode(resp)
}
