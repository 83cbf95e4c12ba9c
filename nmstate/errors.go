package nmstate

import (
	"fmt"
	"strings"
)

// Error is what is wrong with one place of an NMState document: the file (as the caller
// named it), the line, the path of the setting (interfaces[1].ipv4.address[0].ip) and its
// value when one is to blame.
type Error struct {
	File  string
	Line  int // 0 when the problem has no one line, such as an empty document
	Path  string
	Value string
	Msg   string
	// Unsupported names the interface type or setting that nmstate knows and this package
	// does not render (ovs-bridge, ethtool); "" when the document is wrong rather than
	// beyond this package.
	Unsupported string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		if e.Value != "" {
			fmt.Fprintf(&b, " %q", e.Value)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}
