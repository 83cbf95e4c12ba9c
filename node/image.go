package node

import (
	"errors"
	"fmt"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// ErrNoLiveKargs says that the ISO has no kernel-argument areas to carry live kargs.
var ErrNoLiveKargs = fmt.Errorf("this OS image does not support customizing live kernel arguments: %w", embed.ErrNoKargs)

// EmbeddedFilesError says that an ISO to customize already carries embedded files: a node's
// media start from a pristine ISO, whose embed area is replaced, not merged.
type EmbeddedFilesError struct {
	Paths []string
}

func (e *EmbeddedFilesError) Error() string {
	return fmt.Sprintf("the ISO already carries embedded files (%v)", e.Paths)
}

// Is makes errors.Is(err, isobuilder.ErrCustomized) true.
func (e *EmbeddedFilesError) Is(target error) bool { return target == isobuilder.ErrCustomized }

// Image returns iso customized for the node: the payload in its Ignition area and the live
// kernel arguments edited. The ISO must be pristine. A payload that does not fit is an
// *isobuilder.TooLargeError.
func (n *Node) Image(iso *isobuilder.LiveISO) (*isobuilder.Image, error) {
	return n.image(iso, false)
}

// image is Image; with overwrite, an ISO that is already customized is customized from its
// pristine state instead of refused: its embedded files are replaced and its live kernel
// arguments start from the defaults, as `sno-iso reset` would leave them.
func (n *Node) image(iso *isobuilder.LiveISO, overwrite bool) (*isobuilder.Image, error) {
	existing, err := iso.Payload()
	if err != nil {
		return nil, err
	}
	if len(existing) > 0 && !overwrite {
		return nil, &EmbeddedFilesError{Paths: existing.Paths()}
	}
	if hasNetworkFiles(n.Payload) {
		if err := iso.RequireNetworkSupport(); err != nil {
			return nil, err
		}
	}
	var kargs []isobuilder.Patch
	switch {
	case overwrite && iso.Kargs() != nil:
		edited, err := applyLiveKargs(iso.Kargs().Default, n.LiveKargs)
		if err != nil {
			return nil, err
		}
		if kargs, err = iso.KargsPatches(edited); err != nil {
			return nil, err
		}
	case !n.LiveKargs.IsZero():
		if kargs, err = LiveKargsPatches(iso, n.LiveKargs); err != nil {
			return nil, err
		}
	}
	patch, err := iso.PayloadPatch(n.Payload)
	if err != nil {
		return nil, err
	}
	return iso.Image(append(kargs, patch)...)
}

// LiveKargsPatches applies edits to iso's current kernel arguments, for every area; an ISO
// without areas gives ErrNoLiveKargs.
func LiveKargsPatches(iso *isobuilder.LiveISO, edits coreos.LiveKargs) ([]isobuilder.Patch, error) {
	current, err := iso.CurrentKargs()
	if errors.Is(err, embed.ErrNoKargs) {
		return nil, ErrNoLiveKargs
	}
	if err != nil {
		return nil, err
	}
	kargs, err := applyLiveKargs(current, edits)
	if err != nil {
		return nil, err
	}
	return iso.KargsPatches(kargs)
}

// applyLiveKargs is the one way live kargs edit a command line, for ISOs and PXE alike.
func applyLiveKargs(kargs string, edits coreos.LiveKargs) (string, error) {
	edited, err := embed.ModifyKargs(kargs, edits.Append, edits.Delete, edits.Replace)
	if err != nil {
		return "", fmt.Errorf("live kernel arguments: %w", err)
	}
	return edited, nil
}
