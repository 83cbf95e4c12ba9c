package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// BootRequest is what Boot does.
type BootRequest struct {
	// System is a System Id or path; "" takes the address's System or the only one.
	System string
	// Slot is a virtual media slot Id or path; "" chooses a CD/DVD slot.
	Slot string
	// Image is the ISO URL the BMC fetches.
	Image string
	// Mode is ModeUEFI, ModeLegacy or "" (leave the System's mode).
	Mode string
	// NoPower leaves power alone: the override waits for the next boot.
	NoPower bool
	// Wait returns only once the System reports power On.
	Wait bool
}

// BootResult is what Boot did, for reports.
type BootResult struct {
	System string `json:"system"`
	Slot   string `json:"slot"`
	Image  string `json:"image"`
	// Ejected is the image that was in the slot before, if it had to go.
	Ejected string `json:"ejected,omitempty"`
	// Inserted is false when the slot already held the image.
	Inserted bool `json:"inserted"`
	// BootOverrideSet is false when the override was already in place or not needed.
	BootOverrideSet bool `json:"bootOverrideSet"`
	// BootOverride is the override as the BMC reports it once set.
	BootOverride *BootState `json:"bootOverride,omitempty"`
	// BootOverrideNotOnce is true when the BMC kept the override Continuous or ignored it:
	// the System boots the image at every start until the media is ejected.
	BootOverrideNotOnce bool `json:"bootOverrideNotOnce,omitempty"`
	// Reset is the ResetType sent, "" for none.
	Reset      string `json:"reset,omitempty"`
	PowerState string `json:"powerState"`
	// Changed is false when nothing had to change.
	Changed bool `json:"changed"`
}

// IncompleteError is a Boot that failed after it had inserted the image: it says whether
// the image was ejected again or stays inserted.
type IncompleteError struct {
	Slot, Image string
	// Ejected reports that the image was taken out again; EjectErr is why not, otherwise.
	Ejected  bool
	EjectErr error
	Err      error
}

func (e *IncompleteError) Error() string {
	if e.Ejected {
		return fmt.Sprintf("%v (the image was ejected again from slot %s)", e.Err, e.Slot)
	}
	return fmt.Sprintf("%v; the image %s stays inserted in slot %s (ejecting it failed: %v)", e.Err, e.Image, e.Slot, e.EjectErr)
}

func (e *IncompleteError) Unwrap() error { return e.Err }

// ImageURLWarnings lists what about an image URL some BMCs refuse: everything works with a
// short plain-HTTP URL ending in .iso without a query string. An error means no BMC can
// fetch it.
func ImageURLWarnings(image string) ([]string, error) {
	u, err := url.Parse(image)
	if err != nil {
		return nil, fmt.Errorf("image URL %q: %v", image, errors.Unwrap(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("image URL %q: a BMC fetches http:// or https:// URLs with a host", image)
	}
	var warnings []string
	if u.User != nil {
		warnings = append(warnings, "the image URL carries credentials, which BMCs may show to anyone who reads their virtual media")
	}
	if u.RawQuery != "" {
		warnings = append(warnings, "the image URL has a query string, which some BMCs refuse or drop")
	}
	if !strings.HasSuffix(strings.ToLower(u.Path), ".iso") {
		warnings = append(warnings, "the image URL does not end in .iso, which Dell iDRAC refuses")
	}
	if u.Scheme == "https" {
		warnings = append(warnings, "the image URL is HTTPS, which Lenovo XCC1 and some older BMCs cannot fetch")
	}
	if len(image) > 200 {
		warnings = append(warnings, fmt.Sprintf("the image URL is %d characters long; Dell iDRAC refuses long URLs", len(image)))
	}
	return warnings, nil
}

// Boot makes the System boot req.Image once from a virtual CD: it finds the System and a CD
// slot, ejects another image, inserts this one, sets a one-time boot override and powers the
// System on (or restarts it). A slot that already holds the image on a System that is on is
// left as it is: running Boot twice changes nothing.
func (c *Client) Boot(ctx context.Context, req BootRequest) (*BootResult, error) {
	warnings, err := ImageURLWarnings(req.Image)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		c.progress(StepWarning, "%s", w)
	}
	sys, err := c.findSystem(ctx, req.System)
	if err != nil {
		return nil, err
	}
	all, err := c.slots(ctx, sys)
	if err != nil {
		return nil, err
	}
	candidates, err := cdSlots(all, req.Slot)
	if err != nil {
		return nil, err
	}
	if named := candidates[0]; req.Slot != "" && !named.TakesCD() {
		e := &SlotTypeError{Slot: named.ID, MediaTypes: named.MediaTypes}
		for _, s := range all {
			if s.TakesCD() {
				e.CDSlots = append(e.CDSlots, s.ID)
			}
		}
		return nil, e
	}
	res := &BootResult{System: sys.Path, Image: req.Image}
	slot, err := c.placeImage(ctx, candidates, req, res)
	if err != nil {
		return nil, err
	}
	res.Slot = slot.Path
	if !res.Inserted && !req.NoPower && (sys.PowerState == PowerOn || sys.PowerState == PowerPoweringOn) {
		// A restart now would interrupt the boot (or the install) the image started.
		c.progress(StepPower, "system is %s with the image inserted: nothing had to change", sys.PowerState)
		res.PowerState = sys.PowerState
		return res, nil
	}
	if err := c.bootInserted(ctx, sys, req, res); err != nil {
		if !res.Inserted {
			return nil, err
		}
		return nil, c.undoInsert(ctx, slot, req.Image, err)
	}
	switch {
	case req.Wait && res.Reset != "":
		if err := c.waitPower(ctx, sys, PowerOn); err != nil {
			return nil, fmt.Errorf("%w; the image stays inserted in slot %s for the boot in progress", err, slot.ID)
		}
	case res.Reset != "":
		// Report the state the reset led to, not the one before it.
		if err := c.refresh(ctx, sys); err != nil {
			return nil, fmt.Errorf("reading the power state after the reset: %w", err)
		}
	}
	res.PowerState = sys.PowerState
	res.Changed = res.Inserted || res.Ejected != "" || res.BootOverrideSet || res.Reset != ""
	if !res.Changed {
		c.progress(StepPower, "nothing had to change")
	}
	return res, nil
}

// placeImage puts the image into the first candidate slot that takes it (one already holding
// it wins) and checks that the BMC reports it inserted.
func (c *Client) placeImage(ctx context.Context, candidates []*Slot, req BootRequest, res *BootResult) (*Slot, error) {
	for _, s := range candidates {
		if s.Holds(req.Image) {
			c.progress(StepSlot, "slot %s already holds %s", s.ID, req.Image)
			return s, nil
		}
	}
	var lastErr error
	for i, s := range candidates {
		c.progress(StepSlot, "using slot %s (%s)", s.ID, strings.Join(s.MediaTypes, "/"))
		if !s.Empty() {
			if err := c.eject(ctx, s); err != nil {
				return nil, fmt.Errorf("ejecting %s from slot %s: %w", s.Image, s.ID, err)
			}
			c.progress(StepEject, "ejected %s from slot %s", orUnknown(firstNonEmpty(s.Image, s.ImageName)), s.ID)
			res.Ejected = firstNonEmpty(s.Image, s.ImageName)
		}
		err := c.insert(ctx, s, req.Image)
		var refusal *Error
		if errors.As(err, &refusal) && req.Slot == "" && i+1 < len(candidates) &&
			(refusal.StatusCode == http.StatusBadRequest || refusal.StatusCode == http.StatusMethodNotAllowed) {
			// Vendors list slots that only their own tools can fill: try the next one.
			c.progress(StepSlot, "slot %s refused the image (%d): trying the next slot", s.ID, refusal.StatusCode)
			lastErr = err
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("inserting %s into slot %s: %w", req.Image, s.ID, err)
		}
		res.Inserted = true
		fresh, err := c.waitMedia(ctx, s, func(f *Slot) bool { return f.Holds(req.Image) })
		if err != nil {
			return nil, c.undoInsert(ctx, s, req.Image, err)
		}
		if !fresh.Holds(req.Image) {
			err := fmt.Errorf("the BMC accepted the image but slot %s reports Image %q, Inserted %s", s.ID, fresh.Image, boolText(fresh.Inserted))
			return nil, c.undoInsert(ctx, s, req.Image, err)
		}
		c.progress(StepInsert, "inserted %s into slot %s", req.Image, s.ID)
		return fresh, nil
	}
	return nil, lastErr
}

// bootInserted sets the override and drives power.
func (c *Client) bootInserted(ctx context.Context, sys *System, req BootRequest, res *BootResult) error {
	set, err := c.setBootOnce(ctx, sys, req.Mode, res)
	if err != nil {
		return fmt.Errorf("setting the boot override: %w", err)
	}
	res.BootOverrideSet = set
	if req.NoPower {
		c.progress(StepPower, "power left %s: the system boots the image at its next start", orUnknown(sys.PowerState))
		return nil
	}
	if res.Reset, err = c.powerOnOrRestart(ctx, sys); err != nil {
		return fmt.Errorf("powering on: %w", err)
	}
	return nil
}

// undoInsert ejects an image that was inserted for a boot that then failed.
func (c *Client) undoInsert(ctx context.Context, s *Slot, image string, cause error) error {
	e := &IncompleteError{Slot: s.ID, Image: image, Err: cause}
	if e.EjectErr = c.eject(ctx, s); e.EjectErr == nil {
		e.Ejected = true
		c.progress(StepEject, "ejected %s from slot %s again", image, s.ID)
	}
	return e
}

// MediaStatus is one slot in a Status.
type MediaStatus struct {
	ID           string   `json:"id"`
	Path         string   `json:"path"`
	MediaTypes   []string `json:"mediaTypes"`
	Image        string   `json:"image,omitempty"`
	Inserted     bool     `json:"inserted"`
	ConnectedVia string   `json:"connectedVia,omitempty"`
}

// Status is a System's power, boot override and virtual media.
type Status struct {
	System     string        `json:"system"`
	PowerState string        `json:"powerState"`
	Boot       BootState     `json:"bootOverride"`
	Media      []MediaStatus `json:"media"`
}

// Status reads the System's state without changing anything.
func (c *Client) Status(ctx context.Context, system string) (*Status, error) {
	sys, err := c.findSystem(ctx, system)
	if err != nil {
		return nil, err
	}
	slots, err := c.slots(ctx, sys)
	if err != nil && !errors.Is(err, ErrNoCDSlot) {
		return nil, err
	}
	st := &Status{System: sys.Path, PowerState: sys.PowerState, Boot: sys.Boot, Media: []MediaStatus{}}
	for _, s := range slots {
		m := MediaStatus{ID: s.ID, Path: s.Path, MediaTypes: s.MediaTypes, ConnectedVia: s.ConnectedVia}
		if !s.Empty() {
			m.Image, m.Inserted = firstNonEmpty(s.Image, s.ImageName), true
		}
		st.Media = append(st.Media, m)
	}
	return st, nil
}

// EjectResult lists the slots that were emptied.
type EjectResult struct {
	System  string   `json:"system"`
	Ejected []string `json:"ejected"`
	Changed bool     `json:"changed"`
}

// Eject empties the named slot, or every CD/DVD slot that holds media. Empty slots are
// left as they are.
func (c *Client) Eject(ctx context.Context, system, slot string) (*EjectResult, error) {
	sys, err := c.findSystem(ctx, system)
	if err != nil {
		return nil, err
	}
	all, err := c.slots(ctx, sys)
	if err != nil {
		return nil, err
	}
	targets, err := cdSlots(all, slot)
	if err != nil {
		return nil, err
	}
	res := &EjectResult{System: sys.Path, Ejected: []string{}}
	for _, s := range targets {
		if s.Empty() {
			c.progress(StepEject, "slot %s is empty", s.ID)
			continue
		}
		if err := c.eject(ctx, s); err != nil {
			return res, fmt.Errorf("ejecting slot %s: %w", s.ID, err)
		}
		fresh, err := c.waitMedia(ctx, s, (*Slot).Empty)
		if err != nil {
			return res, err
		}
		if !fresh.Empty() {
			return res, fmt.Errorf("the BMC accepted the eject but slot %s still reports %q inserted", s.ID, fresh.Image)
		}
		c.progress(StepEject, "ejected %s from slot %s", firstNonEmpty(s.Image, s.ImageName), s.ID)
		res.Ejected = append(res.Ejected, s.Path)
	}
	res.Changed = len(res.Ejected) > 0
	return res, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func boolText(b *bool) string {
	if b == nil {
		return "absent"
	}
	return fmt.Sprint(*b)
}
