package serve

import (
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

// loggedURI is the request URI with the token replaced, for the access log: a log must not
// hand out the URLs it records.
func (s *Server) loggedURI(r *http.Request) string {
	uri := r.URL.EscapedPath()
	if s.secret != nil {
		// Cut the decoded path, where the token ends even when its slash came as %2F.
		if _, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/"); ok {
			uri = "/{token}/" + (&url.URL{Path: rest}).EscapedPath()
		}
	}
	if r.URL.RawQuery != "" {
		uri += "?" + r.URL.RawQuery
	}
	return uri
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
