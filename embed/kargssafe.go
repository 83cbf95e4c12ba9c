package embed

import (
	"fmt"
	"strings"
)

// UnsafeKargError says that a kernel argument holds a character that GRUB (whose grub.cfg
// carries one of the karg areas, and the PXE configuration) would not pass to the kernel as
// written.
type UnsafeKargError struct {
	Karg   string
	Char   rune
	Reason string
}

func (e *UnsafeKargError) Error() string {
	return fmt.Sprintf("kernel argument %q contains %q: %s; leave it out or spell the argument without it", e.Karg, e.Char, e.Reason)
}

// grubSpecial maps the characters GRUB's script lexer gives a meaning to in an unquoted
// argument of the `linux` command to what it does with them. isolinux's APPEND line takes
// everything up to the end of the line, so control characters (refused for every value) are
// all it would misparse.
var grubSpecial = map[rune]string{
	'"':  "GRUB removes quotes before the kernel sees the line, and an unbalanced one makes grub.cfg fail to parse",
	'\'': "GRUB removes quotes before the kernel sees the line, and an unbalanced one makes grub.cfg fail to parse",
	'\\': "GRUB takes it as an escape and drops it",
	'$':  "GRUB expands it as a variable",
	';':  "GRUB ends the command there and runs the rest as a command of its own",
	'{':  "GRUB takes braces as a block, so grub.cfg fails to parse",
	'}':  "GRUB takes braces as a block, so grub.cfg fails to parse",
	'|':  "GRUB reserves it, so grub.cfg fails to parse",
	'&':  "GRUB reserves it, so grub.cfg fails to parse",
	'<':  "GRUB reserves it, so grub.cfg fails to parse",
	'>':  "GRUB reserves it, so grub.cfg fails to parse",
}

// checkBootloaderSafe refuses a value to be written as kernel arguments that a bootloader
// would misparse, naming the first offending character and what the bootloader would do.
func checkBootloaderSafe(value string) error {
	for _, karg := range strings.Fields(value) {
		if strings.HasPrefix(karg, "#") {
			return &UnsafeKargError{Karg: karg, Char: '#', Reason: "at the start of an argument GRUB starts a comment, dropping the rest of the command line"}
		}
		for _, r := range karg {
			if reason, ok := grubSpecial[r]; ok {
				return &UnsafeKargError{Karg: karg, Char: r, Reason: reason}
			}
		}
	}
	return nil
}
