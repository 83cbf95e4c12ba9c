package capability

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// tokenInput separates the tokens' HMAC inputs from any other use of the key.
const tokenInput = "sno-iso node "

// tokenBytes is how much of the HMAC a token keeps: 128 bits, 22 base64url characters, short
// enough for the BMCs that refuse long URLs.
const tokenBytes = 16

// TokenLength is the length of a token in characters; report tokens (package progress) have
// the same.
var TokenLength = base64.RawURLEncoding.EncodedLen(tokenBytes)

// MinimalSuffix ends the name of a node's minimal ISO: /<node>-minimal.iso.
const MinimalSuffix = "-minimal"

// Token is the capability path segment of node's media: the unpadded base64url encoding of
// the first 16 bytes of HMAC-SHA-256(key, "sno-iso node " + node).
func Token(key []byte, node string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(tokenInput + node))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:tokenBytes])
}

// Accepts reports whether token is node's under the key or, until PreviousUntil, under the
// previous key, or under an older key until its own Until. It does the same work whatever the node and the token, and compares in
// constant time: the answer's timing tells nothing about either.
func (s *Secret) Accepts(node, token string, now time.Time) bool {
	got := []byte(token)
	current := hmac.Equal(got, []byte(Token(s.Key, node)))
	previousKey := s.Key // without a previous key, the same work all the same
	if s.Previous != nil {
		previousKey = s.Previous
	}
	previous := hmac.Equal(got, []byte(Token(previousKey, node))) && s.Previous != nil && now.Before(s.PreviousUntil)
	// Every slot of older keys is computed, filled or not: the same work whatever s holds.
	older := false
	for i := range maxOlderKeys {
		key, until := s.Key, time.Time{}
		if i < len(s.Older) {
			key, until = s.Older[i].Key, s.Older[i].Until
		}
		older = hmac.Equal(got, []byte(Token(key, node))) && now.Before(until) || older
	}
	return current || previous || older
}

// SplitPath splits a request path /<token>/<rest> into the token, the node the rest is
// about, and "/"+rest. A path of another shape has an empty node.
func SplitPath(p string) (token, node, rest string) {
	p, absolute := strings.CutPrefix(p, "/")
	token, rest, ok := strings.Cut(p, "/")
	if !absolute || !ok {
		return "", "", ""
	}
	node, _, nested := strings.Cut(rest, "/")
	if !nested {
		node = strings.TrimSuffix(strings.TrimSuffix(node, ".iso"), MinimalSuffix)
	}
	return token, node, "/" + rest
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
		MinimalISO: prefix + name + MinimalSuffix + ".iso",
		BootIPXE:   prefix + name + "/" + node.IPXEConfig,
		PXEDir:     prefix + name,
		Rootfs:     base + "/" + isobuilder.PXERootfs,
	}
}
