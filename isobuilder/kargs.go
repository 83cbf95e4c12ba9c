package isobuilder

import (
	"fmt"

	"github.com/sno-iso/sno-iso/embed"
)

// The kernel-argument errors of the embed areas, for callers of LiveISO's kargs methods.
var (
	// ErrNoKargs: the ISO has no kernel-argument area.
	ErrNoKargs = embed.ErrNoKargs
	// ErrKargsDisagree: the ISO's kernel-argument areas hold different command lines.
	ErrKargsDisagree = embed.ErrKargsDisagree
)

// KargsPatches returns the patches that write kargs into every kernel-argument area, each
// with its own end and pad characters, so that the bootloaders all see the same command
// line. It fails with embed.ErrNoKargs on an ISO without areas, and when kargs do not fit.
func (l *LiveISO) KargsPatches(kargs string) ([]Patch, error) {
	if l.kargs == nil {
		return nil, embed.ErrNoKargs
	}
	patches := make([]Patch, 0, len(l.kargs.Areas))
	for _, a := range l.kargs.Areas {
		data, err := l.kargs.Render(a, kargs)
		if err != nil {
			return nil, fmt.Errorf("karg area at byte %d (%s): %w", a.Offset, a.File, err)
		}
		patches = append(patches, Patch{Offset: a.Offset, Data: data})
	}
	return patches, nil
}
