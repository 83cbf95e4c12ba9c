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
// argument of the `linux` command to what it does with them. GRUB drops double quotes, and
// the kernel drops those around a whole argument or value when isolinux passes them on, so
// such a quoted value reaches the kernel alike from both bootloaders. isolinux's
// APPEND line takes everything up to the end of the line, so control characters (refused for
// every value) are all it would misparse.
var grubSpecial = map[rune]string{
	'\'': "GRUB removes single quotes, which the kernel does not understand, so GRUB and isolinux would pass different arguments",
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
			return &UnsafeKargError{Karg: karg, Char: '#', Reason: "at the start of an argument GRUB starts a comment, " +
				"dropping the rest of the command line"}
		}
		bare, quoted := splitQuotedValue(karg)
		if strings.ContainsRune(bare, '"') {
			return &UnsafeKargError{Karg: karg, Char: '"', Reason: "GRUB and the kernel agree on double quotes only " +
				"around a whole argument or a whole value (key=\"value\")"}
		}
		for _, r := range bare {
			if reason, special := grubSpecial[r]; special {
				return &UnsafeKargError{Karg: karg, Char: r, Reason: reason}
			}
		}
		// Between double quotes only '$' and the backslash keep their meaning for GRUB.
		if i := strings.IndexAny(quoted, "$\\"); i >= 0 {
			return &UnsafeKargError{Karg: karg, Char: rune(quoted[i]), Reason: grubSpecial[rune(quoted[i])]}
		}
	}
	return nil
}

// splitQuotedValue splits "value" or key="value" into the part outside the quotes and the
// part inside them; any other argument is all outside.
func splitQuotedValue(karg string) (bare, quoted string) {
	key, value, hasValue := strings.Cut(karg, "=")
	if !hasValue {
		key, value = "", karg
	}
	if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' && !strings.ContainsRune(value[1:len(value)-1], '"') {
		return key, value[1 : len(value)-1]
	}
	return karg, ""
}
