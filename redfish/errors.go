package redfish

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

var (
	// ErrNotRedfish marks an answer that is not a Redfish resource: HTML, or JSON of
	// another shape, usually because the address points at something else.
	ErrNotRedfish = errors.New("not a Redfish answer")
	// ErrUnauthorized marks a 401: credentials the BMC refused (ErrWrongCredentials), or
	// none where it wants some (ErrNoCredentials).
	ErrUnauthorized = errors.New("the BMC refused the request as unauthenticated")
	// ErrNoCredentials marks a 401 to a request that carried no credentials.
	ErrNoCredentials = errors.New("the BMC wants credentials and none were given")
	// ErrWrongCredentials marks a 401 to a request that carried credentials.
	ErrWrongCredentials = errors.New("the BMC refused the credentials")
	// ErrInsufficientPrivilege marks a 403, or a refusal that names missing privileges: the
	// account is known but its role may not do this.
	ErrInsufficientPrivilege = errors.New("the BMC account lacks the privilege")
	// ErrPlainHTTP marks an https:// address whose BMC answered in plain HTTP.
	ErrPlainHTTP = errors.New("the BMC answered plain HTTP to a TLS handshake")
	// ErrNoCDSlot marks a BMC without a virtual media slot that takes CD or DVD images.
	ErrNoCDSlot = errors.New("no virtual CD/DVD slot")
	// ErrNoCDBootTarget marks a System whose boot override cannot name a virtual CD.
	ErrNoCDBootTarget = errors.New("the boot override cannot target a CD")
)

// Error is a request the BMC refused: its HTTP status and the Redfish error body.
type Error struct {
	Method, Path string
	StatusCode   int
	// Code and Message are the body's error.code and error.message.
	Code, Message string
	// ExtendedInfo is error.@Message.ExtendedInfo, the BMC's own explanation.
	ExtendedInfo []Message
	// Auth says why an authentication or authorization refusal happened; AuthOK for
	// every other refusal.
	Auth AuthProblem
}

// AuthProblem is why the BMC refused a request as unauthenticated or unauthorized.
type AuthProblem int

// The AuthProblems an Error may carry.
const (
	AuthOK AuthProblem = iota
	// AuthNoCredentials is a 401 to a request without credentials.
	AuthNoCredentials
	// AuthWrongCredentials is a 401 to a request with credentials.
	AuthWrongCredentials
	// AuthInsufficientPrivilege is a 403, or a refusal naming missing privileges, of an
	// account the BMC knows.
	AuthInsufficientPrivilege
)

// privilegeWords mark a refusal as about the account's role rather than its password.
var privilegeWords = []string{"InsufficientPrivilege", "privilege", "AccessDenied", "not authorized to perform"}

// Message is one entry of @Message.ExtendedInfo.
type Message struct {
	MessageID         string   `json:"MessageId"`
	Message           string   `json:"Message"`
	RelatedProperties []string `json:"RelatedProperties"`
	Severity          string   `json:"Severity"`
}

func (e *Error) Error() string {
	var b strings.Builder
	if sentinel := e.authSentinel(); sentinel != nil {
		b.WriteString(sentinel.Error() + ": ")
	}
	fmt.Fprintf(&b, "the BMC refused %s %s (%d %s)", e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode))
	if msg := e.explanation(); msg != "" {
		b.WriteString(": " + msg)
	}
	return b.String()
}

// explanation is what the BMC said: error.message, then each extended message with its
// id. Ids without a message go after error.message; a message that only points at the
// extended ones, or repeats one, is left out.
func (e *Error) explanation() string {
	var extended, bareIDs []string
	seen := map[string]bool{}
	for _, m := range e.ExtendedInfo {
		text := strings.TrimSpace(m.Message)
		id := strings.TrimSpace(m.MessageID)
		if text == "" {
			if id != "" && !seen[id] {
				seen[id] = true
				bareIDs = append(bareIDs, id)
			}
			continue
		}
		if seen[text] {
			continue
		}
		seen[text] = true
		if id != "" {
			text += " [" + id + "]"
		}
		extended = append(extended, text)
	}
	message := strings.TrimSpace(e.Message)
	if seen[message] || (len(extended) > 0 && strings.Contains(message, "ExtendedInfo")) {
		message = ""
	}
	var parts []string
	switch {
	case message != "" && len(bareIDs) > 0:
		parts = append(parts, message+" ["+strings.Join(bareIDs, ", ")+"]")
	case message != "":
		parts = append(parts, message)
	case len(bareIDs) > 0:
		parts = append(parts, strings.Join(bareIDs, ", "))
	case len(extended) == 0 && e.Code != "":
		parts = append(parts, e.Code)
	}
	return strings.Join(append(parts, extended...), "; ")
}

// authSentinel is the sentinel of the error's AuthProblem, nil for other refusals.
func (e *Error) authSentinel() error {
	switch e.Auth {
	case AuthNoCredentials:
		return ErrNoCredentials
	case AuthWrongCredentials:
		return ErrWrongCredentials
	case AuthInsufficientPrivilege:
		return ErrInsufficientPrivilege
	}
	return nil
}

// Unwrap lets errors.Is see ErrUnauthorized in every 401 and the sentinel of its
// AuthProblem.
func (e *Error) Unwrap() []error {
	var out []error
	if e.StatusCode == http.StatusUnauthorized {
		out = append(out, ErrUnauthorized)
	}
	if sentinel := e.authSentinel(); sentinel != nil {
		out = append(out, sentinel)
	}
	return out
}

// classifyAuth sets Auth from the status, whether the request carried credentials, and
// whether the BMC accepted them before.
func (e *Error) classifyAuth(sentCredentials, acceptedBefore bool) {
	privilege := e.mentions(privilegeWords...)
	switch {
	case e.StatusCode == http.StatusForbidden:
		e.Auth = AuthInsufficientPrivilege
	case e.StatusCode == http.StatusUnauthorized && !sentCredentials:
		e.Auth = AuthNoCredentials
	case e.StatusCode == http.StatusUnauthorized && acceptedBefore && privilege:
		e.Auth = AuthInsufficientPrivilege
	case e.StatusCode == http.StatusUnauthorized:
		e.Auth = AuthWrongCredentials
	case e.StatusCode >= 400 && privilege:
		e.Auth = AuthInsufficientPrivilege
	}
}

// mentions reports whether the error's code, message ids, messages or related properties
// contain any of words (case-insensitively).
func (e *Error) mentions(words ...string) bool {
	texts := []string{e.Code, e.Message}
	for _, m := range e.ExtendedInfo {
		texts = append(texts, m.MessageID, m.Message)
		texts = append(texts, m.RelatedProperties...)
	}
	for _, t := range texts {
		t = strings.ToLower(t)
		for _, w := range words {
			if strings.Contains(t, strings.ToLower(w)) {
				return true
			}
		}
	}
	return false
}

// errorBody is the Redfish error payload.
type errorBody struct {
	Error *struct {
		Code         string    `json:"code"`
		Message      string    `json:"message"`
		ExtendedInfo []Message `json:"@Message.ExtendedInfo"`
	} `json:"error"`
}

// parseError reads a refusal. A body that is not a Redfish error still yields an Error,
// with a short excerpt of the body as its message.
func parseError(method, path string, status int, body []byte) *Error {
	e := &Error{Method: method, Path: path, StatusCode: status}
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error != nil {
		e.Code, e.Message, e.ExtendedInfo = eb.Error.Code, eb.Error.Message, eb.Error.ExtendedInfo
		return e
	}
	e.Message = excerpt(body)
	return e
}

// failedDespiteSuccess reports whether a 2xx body carries an error that is not a success report
// (iLO answers 200 with error.code Base.x.Success).
func failedDespiteSuccess(body []byte) (*errorBody, bool) {
	var eb errorBody
	if json.Unmarshal(body, &eb) != nil || eb.Error == nil {
		return nil, false
	}
	if strings.HasSuffix(eb.Error.Code, ".Success") {
		return nil, false
	}
	for _, m := range eb.Error.ExtendedInfo {
		if strings.HasSuffix(m.MessageID, ".Success") {
			return nil, false
		}
	}
	return &eb, eb.Error.Code != "" || len(eb.Error.ExtendedInfo) > 0
}

// excerpt is the start of a body on one line, for messages about answers that are not JSON.
func excerpt(body []byte) string {
	const max = 120
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// What a NotFoundError is about.
const (
	KindSystem = "system"
	KindSlot   = "virtual media slot"
)

// NotFoundError is a System or slot the user named that the BMC does not have.
type NotFoundError struct {
	// Kind is KindSystem or KindSlot.
	Kind, Name string
	// Available lists what exists, for the message.
	Available []string
}

func (e *NotFoundError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("no %s %q: the BMC lists none", e.Kind, e.Name)
	}
	return fmt.Sprintf("no %s %q: the BMC has %s", e.Kind, e.Name, strings.Join(e.Available, ", "))
}

// SlotTypeError is a slot named for a boot that takes no CD or DVD, while the boot override
// targets the virtual CD: the System would not boot the image from it.
type SlotTypeError struct {
	Slot       string
	MediaTypes []string
	// CDSlots are the slots that take a CD or DVD.
	CDSlots []string
}

func (e *SlotTypeError) Error() string {
	msg := fmt.Sprintf("slot %s takes %s, not a CD or DVD, and the boot override targets the virtual CD: "+
		"the system would not boot the image from it", e.Slot, strings.Join(e.MediaTypes, "/"))
	if len(e.CDSlots) > 0 {
		msg += "; the CD/DVD slots are " + strings.Join(e.CDSlots, ", ")
	}
	return msg
}

// AmbiguousSystemError is a BMC with several Systems when none was named.
type AmbiguousSystemError struct{ Available []string }

func (e *AmbiguousSystemError) Error() string {
	return fmt.Sprintf("the BMC manages %d systems (%s): name one", len(e.Available), strings.Join(e.Available, ", "))
}
