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
// a token it does not accept, AccessDenied (403) for another role, MissingParameter (400),
// or, after Fail, the failure it was told to answer (Throttling, ServiceUnavailable).
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
	maxRequests                 int

	mu          sync.Mutex
	requests    int
	grants      map[string]Grant // the tokens it accepts, and what each gets
	received    []string         // every token it was sent, in order
	failStatus  int              // the status of the failure Fail set; 0 answers normally
	failCode    string
	failMessage string
}

// Grant is what the fake STS hands out for a token: Keys, valid for Lifetime from the
// request.
type Grant struct {
	Keys     Keys
	Lifetime time.Duration
}

// StartSTS starts a fake STS for t that grants roleARN to the session session for the tokens
// of grants, and fails t beyond maxRequests requests. tokenFile is the web identity token
// file: a token sent that is not the file's content when it arrives fails t (the SDK must
// read the file again for every request, as projected service account tokens rotate).
func StartSTS(t testing.TB, roleARN, session, tokenFile string, maxRequests int, grants map[string]Grant) *STS {
	s := &STS{roleARN: roleARN, session: session, tokenFile: tokenFile, maxRequests: maxRequests, grants: grants}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(t, w, r) }))
	s.URL = s.Server.URL
	t.Cleanup(s.Server.Close)
	return s
}

// Fail makes the STS answer every well-formed request from now on with the error code and
// its HTTP status, as AWS STS does when it throttles (400 Throttling) or fails (500
// InternalFailure, 503 ServiceUnavailable); a status of 0 makes it answer normally again.
func (s *STS) Fail(status int, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failStatus, s.failCode, s.failMessage = status, code, "the fake STS was told to fail with "+code
}

// Received is every token the STS was sent, in order.
func (s *STS) Received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.received...)
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
	if s.failStatus != 0 {
		stsError(w, s.failStatus, s.failCode, s.failMessage)
		return
	}
	grant, ok := s.grants[token]
	if !ok {
		stsError(w, http.StatusBadRequest, "InvalidIdentityToken", "Incorrect token audience")
		return
	}
	expires := time.Now().Add(grant.Lifetime).UTC().Truncate(time.Second)
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
	resp.Result.Credentials = credentials{grant.Keys.AccessKeyID, grant.Keys.SecretAccessKey,
		fmt.Sprintf("session-token-%d", len(s.received)), expires.Format(time.RFC3339)}
	resp.Result.AssumedRoleUser.Arn = "arn:aws:sts::123456789012:assumed-role/sno-iso/" + s.session
	resp.Result.AssumedRoleUser.AssumedRoleID = "AROAEXAMPLE:" + s.session
	resp.Result.Audience = "sts.amazonaws.com"
	resp.RequestID = fmt.Sprint(len(s.received))
	w.Header().Set("Content-Type", "text/xml")
	xml.NewEncoder(w).Encode(resp)
}

// stsError answers an AWS query protocol ErrorResponse: the Type is Sender for the caller's
// faults (4xx), Receiver for the service's (5xx).
func stsError(w http.ResponseWriter, status int, code, message string) {
	var resp struct {
		XMLName xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ ErrorResponse"`
		Error   struct{ Type, Code, Message string }
		// RequestID names the failed request in AWS's answers.
		RequestID string `xml:"RequestId"`
	}
	resp.Error.Type = "Sender"
	if status >= http.StatusInternalServerError {
		resp.Error.Type = "Receiver"
	}
	resp.Error.Code, resp.Error.Message, resp.RequestID = code, message, "error"
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	xml.NewEncoder(w).Encode(resp)
}
