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

// refuseUnauthorized answers 401 to a request without valid credentials.
func (b *BMC) refuseUnauthorized(w http.ResponseWriter, r *http.Request) {
	p := b.cfg.Profile
	message := "There is no valid session established with the implementation."
	if p.BasicAuthChallenge {
		// sushy-tools (sushy_tools/emulator/auth_basic.py parse_header, unauthorized;
		// error.py Unauthorized): no Authorization header is "Authorization required",
		// a wrong account "Incorrect username or password", both with a Basic challenge.
		w.Header().Set("WWW-Authenticate", `Basic realm="Baremetal API"`)
		message = "Incorrect username or password"
		if r.Header.Get("Authorization") == "" {
			message = "Authorization required"
		}
	}
	if user, pass, ok := r.BasicAuth(); ok && p.EchoCredentials {
		message += fmt.Sprintf(" (user %q, password \"%s\", header %q)", user, p.EchoForm.Encode(pass), r.Header.Get("Authorization"))
	}
	b.writeError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", message)
}

func (b *BMC) login(w http.ResponseWriter, body []byte) {
	var creds struct{ UserName, Password string }
	if json.Unmarshal(body, &creds) != nil {
		b.writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON.")
		return
	}
	if (b.cfg.Username != "" || b.cfg.Password != "") && (creds.UserName != b.cfg.Username || creds.Password != b.cfg.Password) {
		message := "Invalid username or password."
		if b.cfg.Profile.EchoCredentials {
			message = fmt.Sprintf("Invalid password \"%s\" for user %q.", b.cfg.Profile.EchoForm.Encode(creds.Password), creds.UserName)
		}
		b.writeError(w, http.StatusUnauthorized, "Base.1.8.InsufficientPrivilege", message)
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
