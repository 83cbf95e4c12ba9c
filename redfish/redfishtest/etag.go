package redfishtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sno-iso/sno-iso/internal/httpsem"
)

// etag is a hash of the resource's current content.
func (b *BMC) etag(r resource) string {
	data, _ := json.Marshal(r)
	sum := sha256.Sum256(data)
	tag := `"` + hex.EncodeToString(sum[:8]) + `"`
	if b.cfg.Profile.WeakETags {
		return "W/" + tag
	}
	return tag
}

// preconditionFails checks If-Match: a stale ETag fails; with StrictETags a weak one too
// (RFC 9110's strong comparison), else the tags compare weakly, as lenient BMCs do.
func (b *BMC) preconditionFails(r *http.Request, path string) bool {
	ifMatch := strings.TrimSpace(r.Header.Get("If-Match"))
	if ifMatch == "" || ifMatch == "*" {
		return false
	}
	current := strings.TrimPrefix(b.etag(b.tree[path]), "W/")
	if b.cfg.Profile.StrictETags {
		return !httpsem.StrongMatch(ifMatch, current)
	}
	return !httpsem.WeakMatch(ifMatch, current)
}
