// Package redact removes what is secret from text meant for logs, errors and progress lines.
package redact

import "net/url"

// URL returns scheme://host/path of rawURL: the query and user info of a pre-signed or
// authenticated URL (X-Amz-Signature, sig=, a password) are credentials, not for logs.
func URL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(an unparsable URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
