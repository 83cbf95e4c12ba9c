package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// Slot is what the client reads of a VirtualMedia resource.
type Slot struct {
	Path           string   `json:"@odata.id"`
	ID             string   `json:"Id"`
	MediaTypes     []string `json:"MediaTypes"`
	Image          string   `json:"Image"`
	ImageName      string   `json:"ImageName"`
	Inserted       *bool    `json:"Inserted"`
	WriteProtected *bool    `json:"WriteProtected"`
	ConnectedVia   string   `json:"ConnectedVia"`
	Actions        struct {
		Insert *mediaAction `json:"#VirtualMedia.InsertMedia"`
		Eject  *mediaAction `json:"#VirtualMedia.EjectMedia"`
	} `json:"Actions"`
	// allow is the slot's Allow header ("" when the BMC sends none).
	allow string
}

type mediaAction struct {
	Target string `json:"target"`
}

// TakesCD reports whether the slot's MediaTypes include CD or DVD.
func (s *Slot) TakesCD() bool {
	for _, t := range s.MediaTypes {
		if t == "CD" || t == "DVD" {
			return true
		}
	}
	return false
}

// Empty reports whether nothing is connected: Supermicro keeps ImageName (and sometimes
// Image) after an eject but says NotConnected or Inserted false.
func (s *Slot) Empty() bool {
	if s.ConnectedVia == "NotConnected" || s.Inserted != nil && !*s.Inserted {
		return true
	}
	return s.Image == "" && s.ImageName == ""
}

// Holds reports whether the slot has imageURL inserted.
func (s *Slot) Holds(imageURL string) bool {
	return !s.Empty() && s.Inserted != nil && *s.Inserted && sameURL(s.Image, imageURL)
}

// patchable reports whether the slot may be changed with PATCH: its Allow header lists it,
// or there is no Allow header to say otherwise.
func (s *Slot) patchable() bool {
	if s.allow == "" {
		return true
	}
	for _, m := range strings.Split(s.allow, ",") {
		if strings.EqualFold(strings.TrimSpace(m), http.MethodPatch) {
			return true
		}
	}
	return false
}

// sameURL compares two URLs by meaning: scheme and host case-insensitively, default ports
// and an escaped path equal to an unescaped one.
func sameURL(a, b string) bool {
	if a == b {
		return true
	}
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && hostPort(ua) == hostPort(ub) &&
		ua.Path == ub.Path && ua.RawQuery == ub.RawQuery
}

func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

// slots lists the System's virtual media: under the System (current schemas), else under
// the first Manager that manages it (the older placement).
func (c *Client) slots(ctx context.Context, sys *System) ([]*Slot, error) {
	collectionPath := sys.Media.ID
	if collectionPath == "" {
		for _, m := range sys.Links.ManagedBy {
			var manager struct {
				Media odataID `json:"VirtualMedia"`
			}
			if err := c.get(ctx, m.ID, &manager); err != nil {
				return nil, err
			}
			if manager.Media.ID != "" {
				collectionPath = manager.Media.ID
				break
			}
		}
	}
	if collectionPath == "" {
		return nil, fmt.Errorf("%w: system %s has no VirtualMedia, nor does any manager of it", ErrNoCDSlot, sys.Path)
	}
	var col collection
	if err := c.get(ctx, collectionPath, &col); err != nil {
		return nil, err
	}
	var slots []*Slot
	for _, m := range col.Members {
		s, err := c.readSlot(ctx, m.ID)
		if err != nil {
			return nil, err
		}
		slots = append(slots, s)
	}
	return slots, nil
}

func (c *Client) readSlot(ctx context.Context, at string) (*Slot, error) {
	at = strings.TrimRight(at, "/")
	var s Slot
	if err := c.get(ctx, at, &s); err != nil {
		return nil, err
	}
	s.Path = at
	if s.ID == "" {
		s.ID = path.Base(at)
	}
	c.mu.Lock()
	s.allow = c.allow[at]
	c.mu.Unlock()
	return &s, nil
}

// cdSlots returns the slots to try, in order: the one named by want (Id or path), or
// those whose MediaTypes take a CD and that can be changed by action or PATCH.
func cdSlots(slots []*Slot, want string) ([]*Slot, error) {
	if want != "" {
		var names []string
		for _, s := range slots {
			if s.ID == want || s.Path == strings.TrimRight(want, "/") {
				return []*Slot{s}, nil
			}
			names = append(names, s.ID)
		}
		return nil, &NotFoundError{Kind: KindSlot, Name: want, Available: names}
	}
	var cds []*Slot
	var seen []string
	for _, s := range slots {
		seen = append(seen, fmt.Sprintf("%s (%s)", s.ID, strings.Join(s.MediaTypes, "/")))
		if s.TakesCD() && (s.Actions.Insert != nil || s.patchable()) {
			cds = append(cds, s)
		}
	}
	if len(cds) == 0 {
		if len(seen) == 0 {
			return nil, fmt.Errorf("%w: the BMC lists no virtual media", ErrNoCDSlot)
		}
		return nil, fmt.Errorf("%w among %s", ErrNoCDSlot, strings.Join(seen, ", "))
	}
	return cds, nil
}

// insertLadder is the InsertMedia bodies to try in turn, each adding what some BMCs insist
// on; Inserted and WriteProtected are left to their defaults (true), which some BMCs
// refuse to be told.
func insertLadder(imageURL string) []map[string]any {
	protocol := "HTTP"
	if u, err := url.Parse(imageURL); err == nil && strings.EqualFold(u.Scheme, "https") {
		protocol = "HTTPS"
	}
	base := map[string]any{"Image": imageURL}
	withProtocol := extend(base, map[string]any{"TransferProtocolType": protocol})
	withMethod := extend(withProtocol, map[string]any{"TransferMethod": "Stream"})
	withAccount := extend(withMethod, map[string]any{"UserName": "none", "Password": "none"})
	return []map[string]any{base, withProtocol, withMethod, withAccount}
}

func extend(m, more map[string]any) map[string]any {
	out := make(map[string]any, len(m)+len(more))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// ladderProperties are the properties whose mention in a 400 makes the next rung worth a try.
var ladderProperties = []string{"TransferProtocolType", "TransferMethod", "UserName", "Password", "PropertyMissing",
	"ActionParameterMissing"}

// insert puts imageURL into the slot: the InsertMedia action with the ladder of bodies, or a
// PATCH when the slot has no action.
func (c *Client) insert(ctx context.Context, s *Slot, imageURL string) error {
	if s.Actions.Insert == nil || s.Actions.Insert.Target == "" {
		if !s.patchable() {
			return fmt.Errorf("slot %s has no InsertMedia action and does not allow PATCH (Allow: %s)", s.ID, s.allow)
		}
		return c.patch(ctx, s.Path, map[string]any{"Image": imageURL, "Inserted": true, "WriteProtected": true})
	}
	defer c.forget(s.Path)
	var err error
	for _, body := range insertLadder(imageURL) {
		err = c.post(ctx, s.Actions.Insert.Target, body)
		var refusal *Error
		if !errors.As(err, &refusal) || refusal.StatusCode != http.StatusBadRequest || !refusal.mentions(ladderProperties...) {
			return err
		}
	}
	return err
}

// eject empties the slot: the EjectMedia action with an empty JSON object (some BMCs refuse
// a missing body), or a PATCH when the slot has no action.
func (c *Client) eject(ctx context.Context, s *Slot) error {
	if s.Actions.Eject != nil && s.Actions.Eject.Target != "" {
		defer c.forget(s.Path)
		return c.post(ctx, s.Actions.Eject.Target, struct{}{})
	}
	if !s.patchable() {
		return fmt.Errorf("slot %s has no EjectMedia action and does not allow PATCH (Allow: %s)", s.ID, s.allow)
	}
	return c.patch(ctx, s.Path, map[string]any{"Image": nil, "Inserted": false})
}

// waitMedia reads the slot until done says its state is the expected one: some BMCs report
// the old state for a few seconds after a change.
func (c *Client) waitMedia(ctx context.Context, s *Slot, done func(*Slot) bool) (*Slot, error) {
	const reads = 10
	for i := 0; ; i++ {
		fresh, err := c.readSlot(ctx, s.Path)
		if err != nil {
			return nil, err
		}
		if done(fresh) || i == reads-1 {
			return fresh, nil
		}
		if err := c.sleep(ctx, c.opts.Retry.Poll); err != nil {
			return nil, err
		}
	}
}
