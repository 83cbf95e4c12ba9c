package redfish

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrBadAddress marks a BMC address that cannot be used.
var ErrBadAddress = errors.New("bad BMC address")

// systemsPrefix is where every Redfish service keeps its Systems.
const systemsPrefix = "/redfish/v1/Systems/"

// idracDefaultSystem is the System that Metal3 assumes for idrac-virtualmedia:// addresses
// without a path: Dell's only System.
const idracDefaultSystem = systemsPrefix + "System.Embedded.1"

// Address is where a BMC's Redfish service is and, when the address names one, which System.
type Address struct {
	// Endpoint is scheme://host[:port] of the Redfish service.
	Endpoint string
	// SystemPath is /redfish/v1/Systems/ID when the address names a System, else "".
	SystemPath string
}

// ParseAddress accepts https://host, https://host/redfish/v1/Systems/ID and Metal3's
// redfish-virtualmedia://host/... and idrac-virtualmedia://host/... forms (HTTPS, or HTTP
// with a +http suffix as in redfish-virtualmedia+http://). Plain http:// is accepted too.
func ParseAddress(s string) (Address, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Address{}, fmt.Errorf("%w: it is empty; give https://HOST or https://HOST/redfish/v1/Systems/ID", ErrBadAddress)
	}
	if !strings.Contains(s, "://") {
		return Address{}, fmt.Errorf("%w %q: no scheme; write https://%s", ErrBadAddress, s, s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return Address{}, fmt.Errorf("%w %q: %v", ErrBadAddress, s, errors.Unwrap(err))
	}
	scheme, ok := addressScheme(strings.ToLower(u.Scheme))
	if !ok {
		return Address{}, fmt.Errorf("%w %q: scheme %q is not https, http, redfish-virtualmedia or idrac-virtualmedia",
			ErrBadAddress, s, u.Scheme)
	}
	switch {
	case u.User != nil:
		return Address{}, fmt.Errorf("%w: credentials do not belong in the address; "+
			"pass them from the environment or a credentials file", ErrBadAddress)
	case u.Host == "" || u.Hostname() == "":
		return Address{}, fmt.Errorf("%w %q: no host", ErrBadAddress, s)
	case u.RawQuery != "" || u.Fragment != "":
		return Address{}, fmt.Errorf("%w %q: a query or fragment has no meaning here", ErrBadAddress, s)
	}
	a := Address{Endpoint: scheme + "://" + u.Host}
	path := strings.TrimRight(u.Path, "/")
	switch {
	case path == "" || path == "/redfish/v1":
		if strings.HasPrefix(strings.ToLower(u.Scheme), "idrac-") {
			a.SystemPath = idracDefaultSystem
		}
	case strings.HasPrefix(path, systemsPrefix) && !strings.Contains(path[len(systemsPrefix):], "/"):
		a.SystemPath = path
	default:
		return Address{}, fmt.Errorf("%w %q: path %q is neither empty nor %sID", ErrBadAddress, s, u.Path, systemsPrefix)
	}
	return a, nil
}

// addressScheme maps an address scheme to the one spoken on the wire.
func addressScheme(scheme string) (string, bool) {
	switch scheme {
	case "https", "http":
		return scheme, true
	}
	base, wire, found := strings.Cut(scheme, "+")
	if base != "redfish-virtualmedia" && base != "idrac-virtualmedia" && base != "redfish" {
		return "", false
	}
	if !found {
		return "https", true
	}
	return wire, wire == "http" || wire == "https"
}
