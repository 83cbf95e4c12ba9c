package redfishtest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strings"
	"unicode/utf16"
)

// EchoForm is how a BMC with EchoCredentials writes the password it repeats: careless
// firmware logs or reflects what it parsed through whatever encoder its web stack uses.
type EchoForm string

// The forms, each written by the standard library's encoder or after the named rules.
const (
	EchoAsSent EchoForm = ""
	// EchoURLQuery is application/x-www-form-urlencoded (url.QueryEscape): + for a space,
	// upper case hex.
	EchoURLQuery EchoForm = "url-query"
	// EchoURLPath is a URL path (RFC 3986): %20 for a space, / kept, upper case hex.
	EchoURLPath EchoForm = "url-path"
	// EchoLowerHex percent-encodes every byte with lower case hex.
	EchoLowerHex EchoForm = "lower-hex"
	// EchoHTML is html.EscapeString (&amp; &lt; &#34; …), as an HTML error page shows it.
	EchoHTML EchoForm = "html"
	// EchoHTMLHex writes every character as a hex character reference (&#x70;).
	EchoHTMLHex EchoForm = "html-hex"
	// EchoJSONUnicode writes every character as a JSON \u escape, surrogate pairs above
	// U+FFFF, as ASCII-only JSON serializers do.
	EchoJSONUnicode EchoForm = "json-u"
	// EchoJSONString is the JSON string's contents with Go's HTML-safe escapes (\u003c).
	EchoJSONString EchoForm = "json"
	// EchoBase64 and EchoBase64URL are the password alone in base64 (padded) and base64url
	// (unpadded), as firmware that logs a decoded Basic value re-encodes it.
	EchoBase64    EchoForm = "base64"
	EchoBase64URL EchoForm = "base64url"
	// EchoHex is the hex of the password's bytes, as a debug dump shows it.
	EchoHex EchoForm = "hex"
	// EchoUpper is the password in upper case, as a case-folding message template writes it.
	EchoUpper EchoForm = "upper"
	// EchoZeroWidth puts a zero-width space between the characters, as an HTML page that
	// allows line breaks anywhere does.
	EchoZeroWidth EchoForm = "zero-width"
)

// EchoForms lists every EchoForm.
var EchoForms = []EchoForm{EchoAsSent, EchoURLQuery, EchoURLPath, EchoLowerHex, EchoHTML, EchoHTMLHex, EchoJSONUnicode, EchoJSONString,
	EchoBase64, EchoBase64URL, EchoHex, EchoUpper, EchoZeroWidth}

// Encode writes s in the form f.
func (f EchoForm) Encode(s string) string {
	var b strings.Builder
	switch f {
	case EchoURLQuery:
		return url.QueryEscape(s)
	case EchoURLPath:
		return (&url.URL{Path: s}).EscapedPath()
	case EchoLowerHex:
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, "%%%02x", c)
		}
	case EchoHTML:
		return html.EscapeString(s)
	case EchoHTMLHex:
		for _, r := range s {
			fmt.Fprintf(&b, "&#x%x;", r)
		}
	case EchoJSONUnicode:
		for _, r := range s {
			if r >= 0x10000 {
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
	case EchoBase64:
		return base64.StdEncoding.EncodeToString([]byte(s))
	case EchoBase64URL:
		return base64.RawURLEncoding.EncodeToString([]byte(s))
	case EchoHex:
		return hex.EncodeToString([]byte(s))
	case EchoUpper:
		return strings.ToUpper(s)
	case EchoZeroWidth:
		return strings.Join(strings.Split(s, ""), "\u200b")
	case EchoJSONString:
		var out bytes.Buffer
		json.NewEncoder(&out).Encode(s)
		return strings.TrimSuffix(strings.TrimPrefix(out.String(), `"`), "\"\n")
	default:
		return s
	}
	return b.String()
}
