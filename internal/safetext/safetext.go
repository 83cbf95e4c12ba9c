// Package safetext makes text from untrusted input (names inside a crafted ISO, a server's
// words) safe to print on a terminal: it cannot forge lines or send escape sequences.
package safetext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s unchanged when every character is printable (spaces included), else s
// as a double-quoted Go string literal, whose escapes (\n, \x1b, \u202e) show each byte
// that is not.
func Escape(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, notPrintable) {
		return s
	}
	return strconv.QuoteToGraphic(s)
}

func notPrintable(r rune) bool { return r != ' ' && !unicode.IsGraphic(r) }
