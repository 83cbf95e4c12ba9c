package redfishtest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// sessionsPath is the Sessions collection the service root links to, "" without one.
func (b *BMC) sessionsPath() string {
	links, _ := b.tree[root]["Links"].(resource)
	s, _ := links["Sessions"].(resource)
	p, _ := s["@odata.id"].(string)
	return strings.TrimRight(p, "/")
}

func (b *BMC) authorized(r *http.Request) bool {
	if token := r.Header.Get("X-Auth-Token"); token != "" {
		s := b.sessions[token]
		if s == nil {
			return false
		}
		s.uses++
		if n := b.cfg.Profile.SessionExpiresAfter; n > 0 && s.uses > n {
			delete(b.sessions, token)
			return false
		}
		return true
	}
	if b.cfg.Username == "" && b.cfg.Password == "" {
		return true
	}
	user, pass, ok := r.BasicAuth()
	return ok && user == b.cfg.Username && pass == b.cfg.Password
}

func (b *BMC) login(w http.ResponseWriter, body []byte) {
	var creds struct{ UserName, Password string }
	if json.Unmarshal(body, &creds) != nil {
		writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON.")
		return
	}
	if (b.cfg.Username != "" || b.cfg.Password != "") && (creds.UserName != b.cfg.Username || creds.Password != b.cfg.Password) {
		writeError(w, http.StatusUnauthorized, "Base.1.8.InsufficientPrivilege", "Invalid username or password.")
		return
	}
	b.nextID++
	token := fmt.Sprintf("token-%d-%x", b.nextID, sha256.Sum256([]byte(fmt.Sprint(time.Now().UnixNano()))))
	path := fmt.Sprintf("%s/%d", b.sessionsPath(), b.nextID)
	b.sessions[token] = &session{path: path}
	w.Header().Set("X-Auth-Token", token)
	w.Header().Set("Location", path)
	writeJSON(w, http.StatusCreated, resource{"@odata.id": path, "Id": fmt.Sprint(b.nextID), "UserName": creds.UserName}, nil)
}

func (b *BMC) sessionByPath(path string) string {
	for token, s := range b.sessions {
		if s.path == path {
			return token
		}
	}
	return ""
}
