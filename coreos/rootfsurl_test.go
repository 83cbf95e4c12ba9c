package coreos

import (
	"errors"
	"testing"
)

func TestValidateRootfsURL(t *testing.T) {
	for _, ok := range []string{
		"http://192.0.2.1/rootfs.img", "https://mirror.example.com:8443/rhcos/rootfs.img",
		"http://[2001:db8::1]/rootfs.img", "https://s3.example.com/b/rootfs.img?X-Amz-Signature=abc&X-Amz-Expires=60",
	} {
		if err := ValidateRootfsURL(ok); err != nil {
			t.Errorf("ValidateRootfsURL(%q) = %v", ok, err)
		}
	}
	for _, c := range []struct{ url, want string }{
		{"192.0.2.1/rootfs.img", `rootfs URL "192.0.2.1/rootfs.img" is not absolute: write http://192.0.2.1/rootfs.img (or https://)`},
		{"ftp://x/rootfs.img", `rootfs URL "ftp://x/rootfs.img" is ftp: the live system fetches its root file system only over http:// or https://`},
		{"file:///srv/rootfs.img", `rootfs URL "file:///srv/rootfs.img" is file: the live system fetches its root file system only over http:// or https://`},
		{"", `rootfs URL "" is empty`},
		{"http:///rootfs.img", `rootfs URL "http:///rootfs.img" has no host`},
		{"http://:8080/rootfs.img", `rootfs URL "http://:8080/rootfs.img" has no host`},
		{"http://[::1/rootfs.img", `rootfs URL "http://[::1/rootfs.img" is not a URL (missing ']' in host)`},
	} {
		err := ValidateRootfsURL(c.url)
		var typed *RootfsURLError
		if !errors.As(err, &typed) || err.Error() != c.want {
			t.Errorf("ValidateRootfsURL(%q) = %v, want a *RootfsURLError %q", c.url, err, c.want)
		}
	}
}
