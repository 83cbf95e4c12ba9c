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
	// ErrUnauthorized marks credentials the BMC refused, or none where it wants some.
	ErrUnauthorized = errors.New("the BMC refused the credentials")
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
}

// Message is one entry of @Message.ExtendedInfo.
type Message struct {
	MessageID         string   `json:"MessageId"`
	Message           string   `json:"Message"`
	RelatedProperties []string `json:"RelatedProperties"`
	Severity          string   `json:"Severity"`
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.StatusCode == http.StatusUnauthorized {
		b.WriteString(ErrUnauthorized.Error() + ": ")
	}
	fmt.Fprintf(&b, "the BMC refused %s %s (%d %s)", e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode))
	if msg := e.explanation(); msg != "" {
		b.WriteString(": " + msg)
	}
	return b.String()
}

// explanation is what the BMC said: the extended messages (with their ids), else the message.
func (e *Error) explanation() string {
	var parts []string
	for _, m := range e.ExtendedInfo {
		text := strings.TrimSpace(m.Message)
		if text == "" {
			text = m.MessageID
		} else if m.MessageID != "" {
			text += " [" + m.MessageID + "]"
		}
		if text != "" {
			parts = append(parts, text)
		}
	}
	if len(parts) == 0 && e.Message != "" {
		parts = append(parts, e.Message)
	}
	return strings.Join(parts, "; ")
}

// Unwrap lets errors.Is(err, ErrUnauthorized) see a 401.
func (e *Error) Unwrap() error {
	if e.StatusCode == http.StatusUnauthorized {
		return ErrUnauthorized
	}
	return nil
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

// AmbiguousSystemError is a BMC with several Systems when none was named.
type AmbiguousSystemError struct{ Available []string }

func (e *AmbiguousSystemError) Error() string {
	return fmt.Sprintf("the BMC manages %d systems (%s): name one", len(e.Available), strings.Join(e.Available, ", "))
}
