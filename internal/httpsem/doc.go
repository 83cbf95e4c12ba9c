// Package httpsem holds the HTTP semantics that sno-iso's clients (download, origin, redfish)
// and its server (serve) share, one rule each, as RFC 9110 states them: the Content-Range
// header, entity-tag comparison (and If-Range, which depends on it), Retry-After, and the
// back-off and sleep between attempts.
//
// The entity-tag rule: a tag is valid only in its RFC 9110 section 8.8.3 form, an opaque
// string in double quotes, optionally prefixed by a case-sensitive "W/" that makes it weak.
// An unquoted value, or one with a quote or control byte inside, is no entity tag at all: it
// matches nothing and is never used as a validator. Strong comparison (If-Match, If-Range,
// "is this still the version I opened") needs both tags valid, both strong and the same
// opaque string; weak comparison (If-None-Match) needs both valid and the same opaque string.
package httpsem
