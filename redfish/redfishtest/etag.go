package redfishtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sno-iso/sno-iso/internal/httpsem"
)

// etag is a hash of the resource's current content, weak with the WeakETags profile.
func (b *BMC) etag(r resource) string { return b.entityTag(r).String() }

func (b *BMC) entityTag(r resource) httpsem.ETag {
	data, _ := json.Marshal(r)
	sum := sha256.Sum256(data)
	return httpsem.ETag{Opaque: hex.EncodeToString(sum[:8]), Weak: b.cfg.Profile.WeakETags}
}

// preconditionFails checks If-Match: a stale ETag fails; with StrictETags a weak one too
// (RFC 9110's strong comparison), else the tags compare weakly, as lenient BMCs do.
func (b *BMC) preconditionFails(r *http.Request, path string) bool {
	ifMatch := strings.TrimSpace(r.Header.Get("If-Match"))
	if ifMatch == "" || ifMatch == "*" {
		return false
	}
	current := httpsem.ETag{Opaque: b.entityTag(b.tree[path]).Opaque}.String() // its strong form
	if b.cfg.Profile.StrictETags {
		return !httpsem.StrongMatch(ifMatch, current)
	}
	return !httpsem.WeakMatch(ifMatch, current)
}
