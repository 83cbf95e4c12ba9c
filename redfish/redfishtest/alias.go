package redfishtest

import (
	"fmt"
	"html"
	"net/http"
	"strings"
)

// aliasTarget is where a request for a System named by its Name instead of its Id goes
// with the AliasRedirects profile: the same path under the Id.
func (b *BMC) aliasTarget(path string) (string, bool) {
	if !b.cfg.Profile.AliasRedirects {
		return "", false
	}
	prefix := root + "/Systems/"
	rest, ok := strings.CutPrefix(path, prefix)
	if !ok {
		return "", false
	}
	name, tail, _ := strings.Cut(rest, "/")
	if b.tree[prefix+name] != nil {
		return "", false
	}
	for _, sys := range b.systems() {
		r := b.tree[sys]
		if n, _ := r["Name"].(string); n != "" && n == name {
			id, _ := r["Id"].(string)
			target := prefix + id
			if tail != "" {
				target += "/" + tail
			}
			return target, true
		}
	}
	return "", false
}

// redirectAlias answers 307 to the System's path under its Id, with the small HTML page a
// web framework writes. sushy-tools does this for every request that names a System by
// its name (sushy_tools/emulator/main.py all_exception_handler on AliasAccessError, raised
// by the fake and libvirt drivers' lookups in resources/systems/fakedriver.py _get and
// libvirtdriver.py _get_domain); a 307 keeps the method and the body.
func (b *BMC) redirectAlias(w http.ResponseWriter, r *http.Request, target string) {
	w.Header().Set("Location", target)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusTemporaryRedirect)
	fmt.Fprintf(w, "<!doctype html>\n<title>Redirecting</title>\n<p>Redirecting to <a href=%q>%s</a>.\n", target, html.EscapeString(target))
}
