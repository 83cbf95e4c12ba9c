package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// tokenInput separates the tokens' HMAC inputs from any other use of the key.
const tokenInput = "sno-iso node "

// tokenBytes is how much of the HMAC a token keeps: 128 bits, 22 base64url characters, short
// enough for the BMCs that refuse long URLs.
const tokenBytes = 16

// Token is the capability path segment of node's media: the unpadded base64url encoding of
// the first 16 bytes of HMAC-SHA-256(key, "sno-iso node " + node).
func Token(key []byte, node string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(tokenInput + node))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:tokenBytes])
}

// accepts reports whether token is node's under the key or, until PreviousUntil, under the
// previous key. It does the same work whatever the node and the token, and compares in
// constant time: the answer's timing tells nothing about either.
func (s *Secret) accepts(node, token string, now time.Time) bool {
	got := []byte(token)
	current := hmac.Equal(got, []byte(Token(s.Key, node)))
	previousKey := s.Key // without a previous key, the same work all the same
	if s.Previous != nil {
		previousKey = s.Previous
	}
	previous := hmac.Equal(got, []byte(Token(previousKey, node))) && s.Previous != nil && now.Before(s.PreviousUntil)
	return current || previous
}

// URLs are where a server publishes one node's media.
type URLs struct {
	ISO        string // what `sno-iso build` writes
	MinimalISO string // what `sno-iso build --minimal` writes
	BootIPXE   string // the iPXE script to chain
	PXEDir     string // holds vmlinuz, initrd.img, rootfs.img and boot.ipxe: `pxe build --base-url`
	Rootfs     string // the root file system, the same for every node and open to all
}

// NodeURLs returns the URLs of the node called name under baseURL (an http(s) URL, or "" for
// paths only) as a server with secret publishes them; a nil secret gives the plain URLs of an
// open server.
func NodeURLs(baseURL string, secret *Secret, name string) URLs {
	base := strings.TrimRight(baseURL, "/")
	prefix := base + "/"
	if secret != nil {
		prefix += Token(secret.Key, name) + "/"
	}
	return URLs{
		ISO:        prefix + name + ".iso",
		MinimalISO: prefix + name + minimalSuffix + ".iso",
		BootIPXE:   prefix + name + "/" + node.IPXEConfig,
		PXEDir:     prefix + name,
		Rootfs:     base + "/" + isobuilder.PXERootfs,
	}
}

// secretSource is the server's secret, read again when its file changes so that every
// server sharing the file follows a rotation without a restart.
type secretSource struct {
	path  string
	grace time.Duration // for a replaced file that does not name the key it replaced

	mu      sync.Mutex
	stamp   fileStamp
	secret  *Secret
	badFile fileStamp // the version that could not be used, reported once
}

// newSecretSource reads the configured secret file, or the nodes directory's, which it
// creates on first start.
func newSecretSource(cfg Config) (ss *secretSource, created bool, err error) {
	ss = &secretSource{path: cfg.SecretFile, grace: cfg.RotationGrace}
	if ss.path == "" {
		ss.path = filepath.Join(cfg.NodesDir, SecretFileName)
	}
	// Stamped before reading: a change in between is read again on the first request.
	ss.stamp = stamp(ss.path)
	if cfg.SecretFile != "" {
		ss.secret, err = ReadSecretFile(ss.path)
	} else {
		ss.secret, created, err = LoadOrCreateSecret(ss.path)
	}
	if err != nil {
		return nil, false, err
	}
	return ss, created, nil
}

// current returns the secret, reading the file again first if it changed. A file that
// became unusable leaves the last good secret in force; problem is what to log, once.
func (ss *secretSource) current(now time.Time) (s *Secret, problem error) {
	st := stamp(ss.path)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if st.same(ss.stamp) || st.same(ss.badFile) {
		return ss.secret, nil
	}
	next, err := ReadSecretFile(ss.path)
	if err != nil {
		ss.badFile = st
		return ss.secret, err
	}
	if next.Previous == nil && ss.grace > 0 && !hmac.Equal(next.Key, ss.secret.Key) {
		// Replaced by hand: honour the key it replaced for the grace period.
		next.Previous, next.PreviousUntil = ss.secret.Key, now.Add(ss.grace)
	}
	ss.secret, ss.stamp, ss.badFile = next, st, fileStamp{}
	return next, nil
}

// capabilityPath splits a request path /<token>/<rest> into the token, the node the rest is
// about, and "/"+rest. A path of another shape has an empty node.
func capabilityPath(p string) (token, node, rest string) {
	p, absolute := strings.CutPrefix(p, "/")
	token, rest, ok := strings.Cut(p, "/")
	if !absolute || !ok {
		return "", "", ""
	}
	node, _, nested := strings.Cut(rest, "/")
	if !nested {
		node = strings.TrimSuffix(strings.TrimSuffix(node, ".iso"), minimalSuffix)
	}
	return token, node, "/" + rest
}

// authorize checks a capability path and returns the path it stands for, as an open
// server would be asked it. Every refusal is the same 404.
func (s *Server) authorize(p string) (string, error) {
	token, node, rest := capabilityPath(p)
	now := time.Now()
	secret, problem := s.secret.current(now)
	if problem != nil {
		s.log.Printf("%v; still using the secret read before", problem)
	}
	if !secret.accepts(node, token, now) {
		return "", notFound("not found: each node's media are under its own unguessable path")
	}
	return rest, nil
}

// nodePrefix is the path under which node's media are published, without the trailing slash.
func (s *Server) nodePrefix(node string) string {
	return NodeURLs("", s.publishedSecret(), node).PXEDir
}

// publishedSecret is the secret the URLs are made with; nil for an open server.
func (s *Server) publishedSecret() *Secret {
	if s.secret == nil {
		return nil
	}
	secret, _ := s.secret.current(time.Now())
	return secret
}

// servedPath is the path r stands for, without its token: the fetch log's key.
func (s *Server) servedPath(r *http.Request) string {
	if s.secret != nil {
		if _, _, rest := capabilityPath(r.URL.Path); rest != "" {
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
		if _, rest, ok := strings.Cut(strings.TrimPrefix(uri, "/"), "/"); ok {
			uri = "/{token}/" + rest
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
