package embed

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ModifyKargs edits a kernel command line the way coreos-installer does, whatever the order
// the edits were given in: every delete first, then every append, then every replace.
//
// The editing is plain substring work on " " + current + " ": a delete removes each
// occurrence of " value " (so "foo" leaves "foo=bar" alone, and a value with spaces removes
// that sequence), an append adds the value at the end, and a replace "KEY=OLD=NEW" turns each
// " KEY=OLD " into " KEY=NEW ". Values are trimmed of surrounding white space; the result is
// trimmed too.
//
// A value that contains a control character or invalid UTF-8 is refused: a newline would end
// the bootloader's command line early (the rest would become bootloader commands), a NUL
// would end it on s390x, and a karg area that is not UTF-8 is unreadable. What is appended or
// put in by a replace must also pass checkBootloaderSafe.
func ModifyKargs(current string, appends, deletes, replaces []string) (string, error) {
	// Deletes and appends are trimmed before use; replaces are used as given.
	for _, list := range [][]string{deletes, appends} {
		for _, v := range list {
			if err := checkKargValue(strings.TrimSpace(v)); err != nil {
				return "", err
			}
		}
	}
	for _, v := range replaces {
		if err := checkKargValue(v); err != nil {
			return "", err
		}
	}
	// What is added must survive the bootloaders; what is deleted or replaced may be anything
	// another tool left.
	for _, a := range appends {
		if err := checkBootloaderSafe(a); err != nil {
			return "", err
		}
	}
	for _, r := range replaces {
		if key, _, repl, err := splitKargReplace(r); err == nil {
			if err := checkBootloaderSafe(key + "=" + repl); err != nil {
				return "", err
			}
		}
	}
	edited := " " + current + " "
	for _, d := range deletes {
		edited = strings.ReplaceAll(edited, " "+strings.TrimSpace(d)+" ", " ")
	}
	var b strings.Builder
	b.WriteString(edited)
	for _, a := range appends {
		b.WriteString(strings.TrimSpace(a))
		b.WriteByte(' ')
	}
	edited = b.String()
	for _, r := range replaces {
		key, old, repl, err := splitKargReplace(r)
		if err != nil {
			return "", err
		}
		edited = strings.ReplaceAll(edited, " "+key+"="+old+" ", " "+key+"="+repl+" ")
	}
	return strings.TrimSpace(edited), nil
}

// splitKargReplace splits KEY=OLD=NEW: exactly two '=' and three non-empty parts.
func splitKargReplace(r string) (key, old, repl string, err error) {
	parts := strings.Split(r, "=")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", fmt.Errorf("wrong input %q for a kernel argument replacement, format should be: KEY=OLD=NEW", r)
	}
	return parts[0], parts[1], parts[2], nil
}

func checkKargValue(v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("kernel argument %q is not valid UTF-8", v)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("kernel argument %q contains the control character %q; give each argument on its own", v, r)
		}
	}
	return nil
}
