package node

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sno-iso/sno-iso/isobuilder"
)

// MinimalMethod is how a minimal ISO is made of a live ISO.
type MinimalMethod string

const (
	// FromMiniso rebuilds the minimal ISO recorded in coreos/miniso.dat: byte for byte what
	// coreos-installer makes.
	FromMiniso MinimalMethod = "miniso.dat"
	// Rebuild writes a new ISO without the root file system.
	Rebuild MinimalMethod = "rebuild"
)

// ErrAlreadyMinimal says that an ISO has no root file system to leave out.
var ErrAlreadyMinimal = errors.New("there is no images/pxeboot/rootfs.img to leave out: this is a minimal ISO already")

// ChooseMinimal is the one decision of how iso becomes a minimal ISO: from miniso.dat when
// the ISO records one, has the kernel-argument areas to edit and is pristine (miniso.dat
// describes the pristine bytes), else by rebuilding it.
func ChooseMinimal(iso *isobuilder.LiveISO) MinimalMethod {
	if iso.HasMiniso() && iso.Kargs() != nil && iso.CheckPristine() == nil {
		return FromMiniso
	}
	return Rebuild
}

// MinimalISO makes the minimal ISO of iso as a temporary file in dir, as ChooseMinimal
// decides.
func MinimalISO(ctx context.Context, iso *isobuilder.LiveISO, dir string, opts isobuilder.MinimalOptions) (*isobuilder.DerivedISO, error) {
	if ChooseMinimal(iso) == FromMiniso {
		return iso.MinimalFromMiniso(ctx, dir, opts)
	}
	return iso.Rebuild(ctx, dir, isobuilder.RebuildOptions{Minimal: true, MinimalOptions: opts})
}

// MediaOptions says which media Node.Media makes.
type MediaOptions struct {
	// Minimal makes a minimal ISO that fetches its root file system from
	// MinimalOptions.RootfsURL.
	Minimal        bool
	MinimalOptions isobuilder.MinimalOptions
	// GrowEmbedArea rebuilds the ISO with a larger Ignition area when the payload does not
	// fit the ISO's.
	GrowEmbedArea bool
	// MinimalBase, when not nil, is the minimal ISO of the pristine ISO for MinimalOptions,
	// made by the caller (a server makes one for all its nodes): Media customizes it instead of
	// making its own.
	MinimalBase *isobuilder.LiveISO
	// TempDir receives a minimal or grown ISO before it is committed.
	TempDir string
	// OverwriteCustomization customizes an ISO that already carries a customization from its
	// pristine state (coreos-installer's customize --force) instead of refusing it.
	OverwriteCustomization bool
}

// Media is a node's ISO, ready to write.
type Media struct {
	// Image is the node's ISO: the input ISO or Derived, customized.
	Image *isobuilder.Image
	// Derived is the minimal or grown ISO that Image is over, in a temporary file that the
	// caller commits (Derived.Commit) or removes (Derived.Close); nil when Image is over the
	// input ISO or MediaOptions.MinimalBase.
	Derived *isobuilder.DerivedISO
	// Grown, when not nil, says why Derived is the ISO rebuilt with a larger Ignition area:
	// the payload did not fit the ISO's.
	Grown *isobuilder.TooLargeError
	// Warnings add to the node's: what the media, not the node, calls for.
	Warnings []Warning

	over            *isobuilder.LiveISO // the ISO Image customizes
	overMinimalBase bool                // over is MediaOptions.MinimalBase
}

// Composed is Image as spans over the ISO it customizes, for a server to stream.
func (m *Media) Composed() *Composed { return composeImage(m.over.Base(), m.Image) }

// ISOError is an error about the input ISO itself (it cannot be made minimal, or grown),
// rather than about the node; callers name the ISO.
type ISOError struct {
	// File is the ISO's file the error is about, "" for the ISO as a whole.
	File string
	Err  error
}

func (e *ISOError) Error() string { return e.Err.Error() }
func (e *ISOError) Unwrap() error { return e.Err }

// Media makes the node's ISO from the pristine iso. A payload that does not fit the ISO's
// Ignition area is an *isobuilder.TooLargeError unless opts.GrowEmbedArea.
func (n *Node) Media(ctx context.Context, iso *isobuilder.LiveISO, opts MediaOptions) (_ *Media, err error) {
	m := &Media{}
	defer func() {
		if err != nil && m.Derived != nil {
			m.Derived.Close()
		}
	}()
	m.over = iso
	switch {
	case opts.Minimal && opts.MinimalBase != nil:
		m.over, m.overMinimalBase = opts.MinimalBase, true
	case opts.Minimal:
		if m.Derived, err = MinimalISO(ctx, iso, opts.TempDir, opts.MinimalOptions); err != nil {
			return nil, &ISOError{Err: err}
		}
		m.over = m.Derived.LiveISO
	}
	m.Image, err = n.image(m.over, opts.OverwriteCustomization)
	if errors.As(err, &m.Grown) && opts.GrowEmbedArea {
		grown, rerr := GrownISO(ctx, iso, m.Grown, opts)
		if rerr != nil {
			return nil, rerr
		}
		if m.Derived != nil {
			m.Derived.Close()
		}
		m.Derived, m.over, m.overMinimalBase = grown, grown.LiveISO, false
		m.Image, err = n.Image(m.over)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case opts.Minimal && opts.MinimalOptions.RootfsURL == "":
		m.Warnings = []Warning{noRootfsURLWarning}
	case opts.Minimal:
		m.Warnings = n.MinimalWarnings(m.over)
	}
	return m, nil
}

// noRootfsURLWarning is the warning of a minimal ISO made without a rootfs URL.
var noRootfsURLWarning = Warning{Kind: MinimalWithoutRootfsURL, Setting: "output.rootfsURL",
	Text: "the minimal ISO has no root file system and no URL to fetch it from: it cannot boot unaided; " +
		"set output.rootfsURL, or add coreos.live.rootfs_url= to its kernel arguments at boot, or boot its rootfs over PXE"}

// GrownISO rebuilds the pristine iso, minimal when opts.Minimal, with an Ignition area that
// takes the payload that was tooLarge for it, as a temporary file in opts.TempDir: the ISO
// that Media customizes when opts.GrowEmbedArea and the payload does not fit.
func GrownISO(ctx context.Context, iso *isobuilder.LiveISO, tooLarge *isobuilder.TooLargeError,
	opts MediaOptions) (*isobuilder.DerivedISO, error) {
	grown, err := iso.Rebuild(ctx, opts.TempDir, isobuilder.RebuildOptions{
		Minimal: opts.Minimal, MinimalOptions: opts.MinimalOptions, IgnitionAreaSize: GrownAreaSize(tooLarge.Compressed)})
	if err != nil {
		return nil, &ISOError{Err: fmt.Errorf("growing the Ignition area: %w", err)}
	}
	return grown, nil
}

// GrownAreaSize leaves as much free room as the payload takes, in 256 KiB steps, so the area
// stays editable (by sno-iso or coreos-installer) with a config that grows later.
func GrownAreaSize(compressed int64) int64 {
	const step = 256 << 10
	return (2*compressed + step - 1) / step * step
}

// MinimalWarnings are the warnings of the node's media over the minimal ISO media: when its
// initramfs has no configured way to reach the rootfs URL, since it fetches the root file
// system before Ignition runs.
func (n *Node) MinimalWarnings(media *isobuilder.LiveISO) []Warning {
	if hasNetworkFiles(n.Payload) {
		return nil
	}
	current, _ := media.CurrentKargs()
	if HasIPKarg(current) || HasIPKarg(strings.Join(n.LiveKargs.Append, " ")) {
		return nil
	}
	return []Warning{{Kind: MinimalOverDHCP, Text: "the minimal ISO fetches its root file system over the network from the " +
		"initramfs, before Ignition runs; with no ip= live kernel argument and no network keyfile it relies on DHCP: " +
		"add liveKargs (ip=...) or network keyfiles for a static address"}}
}
