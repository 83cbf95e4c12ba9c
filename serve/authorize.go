package serve

import (
	"iter"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/capability"
)

// authorize checks a capability path and returns the path it stands for, as an open
// server would be asked it. Every refusal is the same 404.
func (s *Server) authorize(p string) (string, error) {
	token, node, rest := capability.SplitPath(p)
	now := time.Now()
	secret, problem := s.secret.Current(now)
	if problem != nil {
		s.log.Printf("%v; still using the secret read before", problem)
	}
	if !secret.Accepts(node, token, now) {
		return "", notFound("not found: each node's media are under its own unguessable path")
	}
	return rest, nil
}

// nodePrefix is the path under which node's media are published, without the trailing slash.
func (s *Server) nodePrefix(node string) string {
	return capability.NodeURLs("", s.publishedSecret(), node).PXEDir
}

// publishedSecret is the secret the URLs are made with; nil for an open server.
func (s *Server) publishedSecret() *capability.Secret {
	if s.secret == nil {
		return nil
	}
	secret, _ := s.secret.Current(time.Now())
	return secret
}

// servedPath is the path r stands for, without its token: the fetch log's key.
func (s *Server) servedPath(r *http.Request) string {
	if s.secret != nil {
		if _, _, rest := capability.SplitPath(r.URL.Path); rest != "" {
			return rest
		}
	}
	return r.URL.Path
}

// loggedURI is the request URI for the access log, with every token replaced: a log must not
// hand out the URLs it records. Any segment of the decoded path holding a token-like run
// (minTokenRun or more URL-safe base64 characters, in any position: `//TOKEN/`,
// `/x/../TOKEN/`, `/%2FTOKEN/`, a report URL, a truncated token) shows as {token}, unless the
// run is a node's name's; a query with one is left out.
func (s *Server) loggedURI(r *http.Request) string {
	if s.secret == nil {
		uri := r.URL.EscapedPath()
		if r.URL.RawQuery != "" {
			uri += "?" + r.URL.RawQuery
		}
		return uri
	}
	names := s.nameRuns()
	segments := strings.Split(r.URL.Path, "/")
	for i, seg := range segments {
		if holdsToken(seg, names) {
			segments[i] = "{token}"
		} else {
			segments[i] = url.PathEscape(seg)
		}
	}
	uri := strings.Join(segments, "/")
	if r.URL.RawQuery != "" {
		query, err := url.QueryUnescape(r.URL.RawQuery)
		if err != nil || holdsToken(query, names) || holdsToken(r.URL.RawQuery, names) {
			return uri + "?{redacted}"
		}
		uri += "?" + r.URL.RawQuery
	}
	return uri
}

// minTokenRun is the shortest run of URL-safe base64 characters the access log hides: half a
// token, so a truncated token shown leaves at least 66 of its 128 bits unknown.
var minTokenRun = capability.TokenLength / 2

// holdsToken reports whether s has a token-like run that is not one of names' (nameRuns).
func holdsToken(s string, names map[string]bool) bool {
	for run := range longRuns(s) {
		if !names[run] {
			return true
		}
	}
	return false
}

// longRuns yields the runs of minTokenRun or more URL-safe base64 characters in s.
func longRuns(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for run := range strings.FieldsFuncSeq(s, func(c rune) bool { return !isBase64URL(c) }) {
			if len(run) >= minTokenRun && !yield(run) {
				return
			}
		}
	}
}

func isBase64URL(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// nameRunsOf is the set of token-like runs the nodes' own path segments hold (NODE, and
// NODE-minimal.iso): the access log shows them.
func nameRunsOf(nodes []string) map[string]bool {
	runs := map[string]bool{}
	for _, name := range nodes {
		for run := range longRuns(name + capability.MinimalSuffix) {
			runs[run] = true
		}
		for run := range longRuns(name) {
			runs[run] = true
		}
	}
	return runs
}

// nameRuns is nameRunsOf the last listing of the nodes directory, without reading it again:
// a log line costs no system call.
func (s *Server) nameRuns() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.list == nil {
		return nil
	}
	return s.list.nameRuns
}

// fromLoopback reports whether the request came from this machine.
func fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}
