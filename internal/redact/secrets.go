package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Secrets finds secrets in text in the forms a server may echo them in: as written, in any
// letter case, split by zero-width or other format characters (U+200B, U+00AD, ...), and with
// any of their characters escaped as a URL (query or path, upper or lower case hex, + for a
// space), an HTML or XML character reference (named, decimal or hex), or a JSON or
// JavaScript escape (\", \u00XX, \xXX), mixed as an encoder mixes them; and whole, as the hex
// of its bytes or inside base64 or base64url text at any of the 3 byte alignments.
type Secrets struct {
	re *regexp.Regexp // nil when there is no secret
}

// maxSecretBytes bounds the pattern made of one secret, which grows with every byte's forms
// past what the regexp package compiles; a longer secret is found only as written.
const maxSecretBytes = 256

// NewSecrets returns the finder of secrets; empty ones are ignored. A secret that contains
// another is found whole.
func NewSecrets(secrets ...string) *Secrets {
	secrets = slices.DeleteFunc(slices.Clone(secrets), func(s string) bool { return s == "" })
	if len(secrets) == 0 {
		return &Secrets{}
	}
	// Longer first: the alternation takes the first that matches.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	alts := make([]string, len(secrets))
	for i, s := range secrets {
		if len(s) > maxSecretBytes {
			alts[i] = literalPattern(s)
			continue
		}
		alts[i] = strings.Join(append([]string{secretPattern(s)}, encodedPatterns(s)...), "|")
	}
	re, err := regexp.Compile(strings.Join(alts, "|"))
	if err != nil {
		// Many secrets at once can still make too large a pattern: find each as written.
		for i, s := range secrets {
			alts[i] = literalPattern(s)
		}
		re = regexp.MustCompile(strings.Join(alts, "|"))
	}
	return &Secrets{re: re}
}

// literalPattern matches secret as written. The regexp package reads a byte that is no
// UTF-8 as U+FFFD, in patterns and in text alike, so such a byte is matched as that.
func literalPattern(secret string) string {
	var b strings.Builder
	for i := 0; i < len(secret); {
		r, size := utf8.DecodeRuneInString(secret[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\x{fffd}`)
		} else {
			b.WriteString(regexp.QuoteMeta(secret[i : i+size]))
		}
		i += size
	}
	return b.String()
}

// Replace returns text with every secret, in any of its forms, replaced by with.
func (s *Secrets) Replace(text, with string) string {
	if s.re == nil {
		return text
	}
	return s.re.ReplaceAllLiteralString(text, with)
}

func secretPattern(secret string) string {
	var b strings.Builder
	b.WriteString("(?i:")
	for i := 0; i < len(secret); {
		r, size := utf8.DecodeRuneInString(secret[i:])
		forms := runeForms(r)
		if r == utf8.RuneError && size == 1 {
			forms = byteForms(secret[i])
		}
		if i > 0 {
			// Zero-width and other invisible format characters a page may put between letters.
			b.WriteString(`\p{Cf}*`)
		}
		b.WriteString("(?:")
		b.WriteString(strings.Join(forms, "|"))
		b.WriteString(")")
		i += size
	}
	b.WriteString(")")
	return b.String()
}

// minEncodedLen is the shortest base64 or hex core searched for: shorter ones would match
// unrelated text (a short secret is still found in its other forms).
const minEncodedLen = 4

// encodedPatterns are the patterns of the whole secret encoded: the hex of its bytes (either
// case), its base64 and base64url alone (padded or not), and, at each of the 3 alignments the
// secret can have inside longer encoded text, the characters that its bytes alone determine.
func encodedPatterns(secret string) []string {
	var forms []string
	if h := hex.EncodeToString([]byte(secret)); len(h) >= minEncodedLen {
		forms = append(forms, "(?i:"+h+")")
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		// The secret alone, as a token or an Authorization value carries it, however short.
		forms = append(forms, regexp.QuoteMeta(enc.EncodeToString([]byte(secret)))+"={0,2}")
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for shift := 0; shift < 3; shift++ {
			encoded := enc.EncodeToString(append(make([]byte, shift), secret...))
			// Character i holds bits [6i, 6i+6); the secret's are [8*shift, 8*(shift+len)).
			start, end := (8*shift+5)/6, 8*(shift+len(secret))/6
			if end-start >= minEncodedLen {
				// With the character it shares with what follows, and any padding: nothing of
				// its last bits is left.
				forms = append(forms, regexp.QuoteMeta(encoded[start:end])+`[A-Za-z0-9+/_-]?=*`)
			}
		}
	}
	return forms
}

// byteForms are the patterns of a byte that is no UTF-8: the regexp reads it as U+FFFD,
// which encoders write in its place, and escaped as itself.
func byteForms(c byte) []string {
	return append(runeForms(utf8.RuneError), fmt.Sprintf("(?i:%%%02x)", c), fmt.Sprintf(`\\(?i:x%02x)`, c))
}

// htmlNames are the named references HTML and XML escapers use.
var htmlNames = map[rune]string{'&': "amp", '<': "lt", '>': "gt", '"': "quot", '\'': "apos", '\u00a0': "nbsp"}

// jsonShort are JSON's two-character escapes.
var jsonShort = map[rune]string{'"': `\"`, '\\': `\\`, '/': `\/`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}

// runeForms are the patterns of the ways r is written by the encoders Secrets knows.
func runeForms(r rune) []string {
	forms := []string{regexp.QuoteMeta(string(r))}
	var pct strings.Builder
	for _, c := range []byte(string(r)) {
		fmt.Fprintf(&pct, "%%%02x", c)
	}
	forms = append(forms, "(?i:"+pct.String()+")")
	if r == ' ' {
		forms = append(forms, `\+`)
	}
	forms = append(forms, fmt.Sprintf("&#0*%d;", r), fmt.Sprintf("&#(?i:x0*%x);", r))
	if name, ok := htmlNames[r]; ok {
		forms = append(forms, "&"+name+";")
	}
	if short, ok := jsonShort[r]; ok {
		forms = append(forms, regexp.QuoteMeta(short))
	}
	if r < 0x100 {
		forms = append(forms, fmt.Sprintf(`\\(?i:x%02x)`, r))
	}
	if r < 0x10000 {
		forms = append(forms, fmt.Sprintf(`\\(?i:u%04x)`, r))
	} else if hi, lo := utf16.EncodeRune(r); hi != 0xfffd {
		forms = append(forms, fmt.Sprintf(`\\(?i:u%04x)\\(?i:u%04x)`, hi, lo))
	}
	return forms
}
