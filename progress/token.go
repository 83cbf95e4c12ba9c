package progress

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
)

// tokenLabel separates report tokens from every other use of the server's secret, the media
// capability tokens in particular: knowing a node's report URL opens none of its media.
const tokenLabel = "sno-iso report "

// tokenBytes is how much of the HMAC a token keeps: 128 bits, 22 base64url characters.
const tokenBytes = 16

// Token is node's report token under key: the unpadded base64url encoding of the first 16
// bytes of HMAC-SHA-256(key, "sno-iso report " + node).
func Token(key []byte, node string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(tokenLabel + node))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:tokenBytes])
}

// Accepts reports whether token is node's under one of keys. Every key is tried, in
// constant time, whatever matched: the answer's timing tells nothing about the token.
func Accepts(keys [][]byte, node, token string) bool {
	ok := false
	for _, k := range keys {
		if hmac.Equal([]byte(token), []byte(Token(k, node))) {
			ok = true
		}
	}
	return ok
}

// reportSuffix ends every report URL.
const reportSuffix = "/report"

// URL is node's report URL under base (a server's http(s) URL): base/<token>/<node>/report.
func URL(base string, key []byte, node string) string {
	return strings.TrimRight(base, "/") + "/" + Token(key, node) + "/" + node + reportSuffix
}

// IsReportPath tells whether an URL path has the shape of a report URL's.
func IsReportPath(p string) bool {
	_, _, ok := splitPath(p)
	return ok
}

// splitPath splits /<token>/<node>/report.
func splitPath(p string) (token, node string, ok bool) {
	rest, found := strings.CutPrefix(p, "/")
	if !found {
		return "", "", false
	}
	rest, found = strings.CutSuffix(rest, reportSuffix)
	if !found {
		return "", "", false
	}
	token, node, found = strings.Cut(rest, "/")
	if !found || token == "" || node == "" || strings.Contains(node, "/") {
		return "", "", false
	}
	return token, node, true
}

// CheckURL checks a report URL given by hand: http or https, with a host, ending in /report.
func CheckURL(u string) error {
	parsed, err := url.Parse(u)
	switch {
	case err != nil:
		return fmt.Errorf("report URL %q: %w", u, err)
	case parsed.Scheme != "http" && parsed.Scheme != "https":
		return fmt.Errorf("report URL %q: not http or https", u)
	case parsed.Host == "":
		return fmt.Errorf("report URL %q has no host", u)
	case !strings.HasSuffix(parsed.Path, reportSuffix) || parsed.RawQuery != "" || parsed.Fragment != "":
		return fmt.Errorf("report URL %q does not end in %s: give the URL `sno-iso serve urls` prints for the node", u, reportSuffix)
	case strings.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return fmt.Errorf("report URL %q has spaces or control characters", u)
	}
	return nil
}
