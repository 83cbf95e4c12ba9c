package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

var pctHex = regexp.MustCompile(`%[0-9A-F]{2}`)

// The forms an encoder gives a password, each written here by the standard library or by
// hand after the encoding's rules, not by the code under test.
func encodings(pw string) map[string]string {
	jsonHTML, _ := json.Marshal(pw)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	enc.Encode(pw)
	var allU, allHex, allDec, lowerPct strings.Builder
	for _, r := range pw {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&allU, `\u%04X\u%04X`, hi, lo)
		} else {
			fmt.Fprintf(&allU, `\u%04x`, r)
		}
		fmt.Fprintf(&allHex, "&#x%X;", r)
		fmt.Fprintf(&allDec, "&#%d;", r)
	}
	for _, c := range []byte(pw) {
		fmt.Fprintf(&lowerPct, "%%%02x", c)
	}
	return map[string]string{
		"as written":                      pw,
		"URL query":                       url.QueryEscape(pw),
		"URL query, lower case hex":       pctHex.ReplaceAllStringFunc(url.QueryEscape(pw), strings.ToLower),
		"URL path segment":                url.PathEscape(pw),
		"URL path, / kept, %20 for space": (&url.URL{Path: pw}).EscapedPath(),
		"every byte %xx":                  lowerPct.String(),
		"HTML":                            html.EscapeString(pw),
		"HTML, every character &#xHH;":    allHex.String(),
		"HTML, every character &#NN;":     allDec.String(),
		"JSON, HTML-safe":                 string(jsonHTML[1 : len(jsonHTML)-1]),
		"JSON":                            strings.TrimSuffix(plain.String()[1:], "\"\n"),
		"JSON, every character \\u":       allU.String(),
		"base64":                          base64.StdEncoding.EncodeToString([]byte(pw)),
		"base64url":                       base64.URLEncoding.EncodeToString([]byte(pw)),
	}
}

func TestSecretsEveryEncoding(t *testing.T) {
	for _, pw := range []string{`p@ss w/rd"<&é+%\x'`, "calvin", "tab\there😀"} {
		s := NewSecrets(pw, "other-secret")
		for name, form := range encodings(pw) {
			text := "bad password [" + form + "] for root"
			got := s.Replace(text, "<redacted>")
			if got != "bad password [<redacted>] for root" {
				t.Errorf("%q, %s: %q", pw, name, got)
			}
		}
	}
}

func TestSecretsLeaveTheRest(t *testing.T) {
	s := NewSecrets("s3cret", "")
	for _, text := range []string{"s3cre t", "s3cre", "%73%33%63%72%65", "no secret here", "czNjcmV"} {
		if got := s.Replace(text, "X"); got != text {
			t.Errorf("Replace(%q) = %q", text, got)
		}
	}
	if got := NewSecrets().Replace("s3cret", "X"); got != "s3cret" {
		t.Errorf("no secrets: %q", got)
	}
	// A secret that contains another is taken whole.
	if got := NewSecrets("pw", "pw-long").Replace("a pw-long b pw", "X"); got != "a X b X" {
		t.Errorf("nested secrets: %q", got)
	}
}

// The forms careless BMC firmware echoes a password in beyond the escapers': another letter
// case, split by zero-width characters, the hex of its bytes, and inside base64 or base64url
// text (the password alone or among other bytes, at each of the 3 byte alignments).
func TestSecretsEncodedForms(t *testing.T) {
	const pw = "Hunter2?>secret~"
	s := NewSecrets(pw)
	forms := map[string]string{
		"upper case":         strings.ToUpper(pw),
		"lower case":         strings.ToLower(pw),
		"zero-width spaces":  strings.Join(strings.Split(pw, ""), "\u200b"),
		"soft hyphens, BOM":  "Hun\u00adter2?>\ufeffsecret~",
		"hex":                hex.EncodeToString([]byte(pw)),
		"hex, upper case":    strings.ToUpper(hex.EncodeToString([]byte(pw))),
		"base64 of it alone": base64.StdEncoding.EncodeToString([]byte(pw)),
		"base64url, no pad":  base64.RawURLEncoding.EncodeToString([]byte(pw)),
	}
	for name, form := range forms {
		if got := s.Replace("echo ["+form+"] end", "X"); got != "echo [X] end" {
			t.Errorf("%s: %q left %q", name, form, got)
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for prefix := range 3 {
			text := enc.EncodeToString([]byte("user:xy"[:5+prefix] + pw + "\x00tail"))
			got := s.Replace(text, "X")
			if !strings.Contains(got, "X") || len(got) > len(text)-len(pw)*4/3+4 {
				t.Errorf("base64 with %d bytes before: %q left %q", 5+prefix, text, got)
			}
		}
	}
}

// A secret that is no UTF-8 (an environment variable can hold one) is found as written, as
// %XX and \xXX escapes, and with U+FFFD where an encoder replaced the byte.
func TestSecretsNotUTF8(t *testing.T) {
	s := NewSecrets("pa\xffss")
	for _, form := range []string{"pa\xffss", "pa%FFss", "pa%ffss", `pa\xffss`, "pa\ufffdss", `pa\ufffdss`, "pa&#xfffd;ss"} {
		if got := s.Replace("<"+form+">", "X"); got != "<X>" {
			t.Errorf("%q: %q", form, got)
		}
	}
}

// FuzzSecrets: whatever the secret and the text around it, no encoding of the secret is left
// once replaced (by a character no encoding holds).
func FuzzSecrets(f *testing.F) {
	f.Add("calvin", "bad password ", " for root")
	f.Add(`p@ss w/rd"<&é+%\x'`, `{"message":"`, `"}`)
	f.Add("aa", "a", "a")
	f.Add("tab\there😀", "&#x", ";")
	f.Fuzz(func(t *testing.T, secret, before, after string) {
		// Bytes that are no UTF-8 join the text around them into other characters (a secret
		// "\xf0\x98\x80" before "\xb9" is one character): such a secret is TestSecretsNotUTF8's.
		if secret == "" || strings.ContainsRune(secret, 0) || len(secret) > 64 ||
			!utf8.ValidString(secret) || !utf8.ValidString(before) || !utf8.ValidString(after) {
			return
		}
		s := NewSecrets(secret)
		for name, form := range encodings(secret) {
			got := s.Replace(before+form+after, "\x00")
			if strings.Contains(got, form) {
				t.Fatalf("%s form %q left in %q", name, form, got)
			}
		}
	})
}

// A secret too long for the forms' pattern, even one with bytes that are no UTF-8, is found as
// written instead of making NewSecrets fail.
func TestSecretsLong(t *testing.T) {
	long := "root:\x01:2" + strings.Repeat("\xc0", 2000)
	for _, secret := range []string{long, strings.Repeat("pässword", 100)} {
		if got := NewSecrets(secret).Replace("<"+secret+">", "X"); got != "<X>" {
			t.Errorf("%d-byte secret left: %q", len(secret), got[:min(len(got), 40)])
		}
	}
}
