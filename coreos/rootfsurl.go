package coreos

import (
	"fmt"
	"net/url"
	"strings"
)

// RootfsURLError says why a URL cannot be a minimal ISO's coreos.live.rootfs_url: the live
// initramfs fetches the root file system only over http or https, from a host.
type RootfsURLError struct {
	URL    string
	Reason string
}

func (e *RootfsURLError) Error() string {
	return fmt.Sprintf("rootfs URL %q %s", e.URL, e.Reason)
}

// ValidateRootfsURL accepts an absolute http or https URL with a host.
func ValidateRootfsURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return &RootfsURLError{URL: raw, Reason: "is empty"}
	case err != nil:
		return &RootfsURLError{URL: raw, Reason: fmt.Sprintf("is not a URL (%v)", errorCause(err))}
	case u.Scheme == "":
		return &RootfsURLError{URL: raw, Reason: fmt.Sprintf("is not absolute: write http://%s (or https://)", strings.TrimPrefix(raw, "//"))}
	case u.Scheme != "http" && u.Scheme != "https":
		return &RootfsURLError{URL: raw,
			Reason: fmt.Sprintf("is %s: the live system fetches its root file system only over http:// or https://", u.Scheme)}
	case u.Host == "" || u.Hostname() == "":
		return &RootfsURLError{URL: raw, Reason: "has no host"}
	}
	return nil
}

// errorCause is a url.Error's own reason, without the URL it repeats.
func errorCause(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
