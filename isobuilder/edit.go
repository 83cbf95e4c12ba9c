package isobuilder

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
)

// The edits of an ISO's embed areas that coreos-installer's `iso ignition`, `iso network`,
// `iso kargs` and `iso reset` make, as Images over the ISO.

var (
	// ErrNoNetworkSupport says that the ISO's live initramfs would ignore embedded network
	// keyfiles; RequireNetworkSupport's error wraps it with the reason.
	ErrNoNetworkSupport = errors.New("this OS image does not support customizing network settings")
	// ErrHasIgnition says that the ISO already embeds an Ignition config to replace.
	ErrHasIgnition = errors.New("this ISO already has an embedded Ignition config")
	// ErrHasKeyfiles says that the ISO already embeds network keyfiles to replace.
	ErrHasKeyfiles = errors.New("this ISO already has embedded network settings")
	// ErrNoIgnition says that the ISO embeds no Ignition config. Like the other capitalised
	// texts of this package, it keeps coreos-installer's words, which scripts grep for.
	ErrNoIgnition = errors.New("No embedded Ignition config")
	// ErrNoKeyfiles says that the ISO embeds no network keyfiles.
	ErrNoKeyfiles = errors.New("No embedded network settings")
)

// RequireNetworkSupport returns an error wrapping ErrNoNetworkSupport, with the reason, for
// ISOs whose live initramfs would ignore embedded keyfiles.
func (l *LiveISO) RequireNetworkSupport() error {
	features, found := l.Features()
	switch {
	case features.LiveInitrdNetwork:
		return nil
	case !found:
		return fmt.Errorf("%w (the ISO has no coreos/features.json: "+
			"it predates network support, so the live system would ignore the keyfiles)", ErrNoNetworkSupport)
	}
	return fmt.Errorf("%w (its coreos/features.json lacks live-initrd-network, "+
		"so the live system would ignore the keyfiles)", ErrNoNetworkSupport)
}

// EmbeddedIgnition returns the embedded Ignition config exactly as stored, or ErrNoIgnition.
func (l *LiveISO) EmbeddedIgnition() ([]byte, error) {
	files, err := l.Payload()
	if err != nil {
		return nil, err
	}
	cfg, ok := files[initrd.IgnitionPath]
	if !ok {
		return nil, ErrNoIgnition
	}
	return cfg, nil
}

// EmbedIgnition returns the ISO with cfg as its embedded Ignition config, keeping embedded
// keyfiles. A config already there is ErrHasIgnition unless replace; a payload that does not
// fit is a *TooLargeError.
func (l *LiveISO) EmbedIgnition(cfg []byte, replace bool) (*Image, error) {
	return l.editPayload(func(files initrd.Files) error {
		if _, ok := files[initrd.IgnitionPath]; ok && !replace {
			return ErrHasIgnition
		}
		files[initrd.IgnitionPath] = cfg
		return nil
	})
}

// RemoveIgnition returns the ISO without its embedded Ignition config, keeping embedded
// keyfiles.
func (l *LiveISO) RemoveIgnition() (*Image, error) {
	return l.editPayload(func(files initrd.Files) error {
		delete(files, initrd.IgnitionPath)
		return nil
	})
}

// EmbeddedKeyfiles returns the embedded network keyfiles, named relative to
// initrd.NetworkDir, or ErrNoKeyfiles.
func (l *LiveISO) EmbeddedKeyfiles() (initrd.Files, error) {
	files, err := l.Payload()
	if err != nil {
		return nil, err
	}
	keyfiles := initrd.Files{}
	for p, data := range files {
		if initrd.IsNetworkFile(p) {
			keyfiles[strings.TrimPrefix(p, initrd.NetworkDir+"/")] = data
		}
	}
	if len(keyfiles) == 0 {
		return nil, ErrNoKeyfiles
	}
	return keyfiles, nil
}

// EmbedKeyfiles returns the ISO with keyfiles (payload members under initrd.NetworkDir) as
// its embedded network settings, keeping the embedded Ignition config. It needs an ISO that
// supports them (else ErrNoNetworkSupport); keyfiles already there are ErrHasKeyfiles unless
// replace, and are replaced as a whole.
func (l *LiveISO) EmbedKeyfiles(keyfiles initrd.Files, replace bool) (*Image, error) {
	if err := l.RequireNetworkSupport(); err != nil {
		return nil, err
	}
	return l.editPayload(func(files initrd.Files) error {
		if removeKeyfiles(files) && !replace {
			return ErrHasKeyfiles
		}
		for p, data := range keyfiles {
			files[p] = data
		}
		return nil
	})
}

// RemoveKeyfiles returns the ISO without its embedded keyfiles, keeping the embedded
// Ignition config.
func (l *LiveISO) RemoveKeyfiles() (*Image, error) {
	return l.editPayload(func(files initrd.Files) error {
		removeKeyfiles(files)
		return nil
	})
}

// removeKeyfiles deletes the network keyfiles of files and reports whether there were any.
func removeKeyfiles(files initrd.Files) bool {
	found := false
	for p := range files {
		if initrd.IsNetworkFile(p) {
			delete(files, p)
			found = true
		}
	}
	return found
}

// editPayload returns the ISO with its embedded payload changed by edit.
func (l *LiveISO) editPayload(edit func(initrd.Files) error) (*Image, error) {
	files, err := l.Payload()
	if err != nil {
		return nil, err
	}
	if err := edit(files); err != nil {
		return nil, err
	}
	patch, err := l.PayloadPatch(files)
	if err != nil {
		return nil, err
	}
	return l.Image(patch)
}

// ModifyKargs returns the ISO with its kernel arguments edited as embed.ModifyKargs does, in
// every area. An ISO without areas gives embed.ErrNoKargs.
func (l *LiveISO) ModifyKargs(appends, deletes, replaces []string) (*Image, error) {
	current, err := l.CurrentKargs()
	if err != nil {
		return nil, err
	}
	kargs, err := embed.ModifyKargs(current, appends, deletes, replaces)
	if err != nil {
		return nil, err
	}
	return l.kargsImage(kargs)
}

// ResetKargs returns the ISO with its default kernel arguments in every area. It does not
// read the current ones: it is the cure for areas that disagree.
func (l *LiveISO) ResetKargs() (*Image, error) {
	if l.kargs == nil {
		return nil, embed.ErrNoKargs
	}
	return l.kargsImage(l.kargs.Default)
}

func (l *LiveISO) kargsImage(kargs string) (*Image, error) {
	patches, err := l.KargsPatches(kargs)
	if err != nil {
		return nil, err
	}
	return l.Image(patches...)
}

// Reset returns the ISO with every customization undone: an empty Ignition area and, when
// it has kernel-argument areas, the default kernel arguments. Neither step reads what is
// there now, so it also cures an undecodable payload or karg areas that disagree.
func (l *LiveISO) Reset() (*Image, error) {
	empty, err := l.PayloadPatch(initrd.Files{})
	if err != nil {
		return nil, err
	}
	patches := []Patch{empty}
	if l.kargs != nil {
		kargs, err := l.KargsPatches(l.kargs.Default)
		if err != nil {
			return nil, err
		}
		patches = append(patches, kargs...)
	}
	return l.Image(patches...)
}
