package redfishtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
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

// preconditionFails checks If-Match: a stale ETag fails; with StrictETags a weak one too.
func (b *BMC) preconditionFails(r *http.Request, path string) bool {
	ifMatch := strings.TrimSpace(r.Header.Get("If-Match"))
	if ifMatch == "" || ifMatch == "*" {
		return false
	}
	current := strings.TrimPrefix(b.etag(b.tree[path]), "W/")
	if b.cfg.Profile.StrictETags {
		return ifMatch != current
	}
	return strings.TrimPrefix(ifMatch, "W/") != current
}
