package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// Options after the positional arguments are moved in front of them, with their values, as
// coreos-installer's parser allows; a short option is spelt long, so that both forms of one
// option may be mixed.
func TestIntersperse(t *testing.T) {
	app := newApp(nil, nil, nil)
	for _, c := range []struct{ in, want []string }{
		{[]string{"sno-iso", "ignition", "embed", "rhcos.iso", "-i", "config.ign", "-f"},
			[]string{"sno-iso", "ignition", "embed", "--ignition-file", "config.ign", "--force", "--", "rhcos.iso"}},
		{[]string{"sno-iso", "kargs", "modify", "rhcos.iso", "-a", "ip=dhcp", "--append", "quiet", "-o=out.iso"},
			[]string{"sno-iso", "kargs", "modify", "--append", "ip=dhcp", "--append", "quiet", "--output=out.iso", "--", "rhcos.iso"}},
		// -fi: the last of combined short options takes the value, from the next argument or
		// from the rest of its own.
		{[]string{"sno-iso", "ignition", "embed", "rhcos.iso", "-fi", "config.ign"},
			[]string{"sno-iso", "ignition", "embed", "--force", "--ignition-file", "config.ign", "--", "rhcos.iso"}},
		{[]string{"sno-iso", "ignition", "embed", "-ficonfig.ign", "-o-", "rhcos.iso"},
			[]string{"sno-iso", "ignition", "embed", "--force", "--ignition-file=config.ign", "--output=-", "--", "rhcos.iso"}},
		{[]string{"sno-iso", "kargs", "modify", "-afoo", "-a=bar", "rhcos.iso"},
			[]string{"sno-iso", "kargs", "modify", "--append=foo", "--append=bar", "--", "rhcos.iso"}},
		// An unknown short option ends a combination, named alone.
		{[]string{"sno-iso", "ignition", "embed", "-fxi", "config.ign", "rhcos.iso"},
			[]string{"sno-iso", "ignition", "embed", "--force", "-x", "--", "config.ign", "rhcos.iso"}},
		// After --, everything is positional.
		{[]string{"sno-iso", "inspect", "--", "-odd.iso"}, []string{"sno-iso", "inspect", "--", "-odd.iso"}},
		{[]string{"sno-iso"}, []string{"sno-iso"}},
	} {
		if got, err := intersperse(app, c.in); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("intersperse(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestParseBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"http://192.0.2.1:8080/":    "http://192.0.2.1:8080",
		"https://example.com/sno//": "https://example.com/sno",
	} {
		if got, err := parseBaseURL(in); err != nil || got != want {
			t.Errorf("parseBaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://x", "http://", "http://x/?a=b", "http://u@x/", "http://x/a b", "x"} {
		_, err := parseBaseURL(bad)
		var usage *usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--base-url") {
			t.Errorf("parseBaseURL(%q): %v, want a usage error naming --base-url", bad, err)
		}
	}
}

func TestListenURL(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080",
		"[::1]:80":       "http://[::1]:80",
		"0.0.0.0:8080":   "",
		"[::]:8080":      "",
	} {
		tcp, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := listenURL(tcp, false); got != want {
			t.Errorf("listenURL(%s) = %q, want %q", addr, got, want)
		}
		if got, want := listenURL(tcp, true), strings.Replace(want, "http:", "https:", 1); got != want {
			t.Errorf("listenURL(%s) with TLS = %q, want %q", addr, got, want)
		}
	}
}

func TestTempDirFor(t *testing.T) {
	if got := tempDirFor("-"); got != os.TempDir() {
		t.Errorf("for standard output: %q", got)
	}
	if got := tempDirFor("out/sno.iso"); got != "out" {
		t.Errorf("for out/sno.iso: %q, want the output's directory", got)
	}
}

// nodeError names the ISO and adds the command line's way out, keeping the library error.
func TestNodeError(t *testing.T) {
	tooLarge := &isobuilder.TooLargeError{Compressed: 300000, Capacity: 262144, File: "IMAGES/IGNITION.IMG"}
	for _, c := range []struct {
		err   error
		wants []string
	}{
		{tooLarge, []string{"does not fit the ISO", "--grow-embed-area", "37856 bytes over"}},
		{&node.EmbeddedFilesError{Paths: []string{"config.ign"}}, []string{"rhcos.iso already carries embedded files ([config.ign])", "`sno-iso reset`"}},
		{isobuilder.ErrNoNetworkSupport, []string{"rhcos.iso: this OS image does not support customizing network settings", "`sno-iso kargs modify -a`"}},
		{node.ErrNoLiveKargs, []string{"rhcos.iso: this OS image does not support customizing live kernel arguments"}},
		{&node.ISOError{Err: errors.New("no IMAGES/PXEBOOT")}, []string{"rhcos.iso: no IMAGES/PXEBOOT"}},
	} {
		got := nodeError(c.err, "rhcos.iso").Error()
		for _, w := range c.wants {
			if !strings.Contains(got, w) {
				t.Errorf("nodeError(%v) = %q, lacks %q", c.err, got, w)
			}
		}
	}
	other := fmt.Errorf("something else")
	if nodeError(other, "rhcos.iso") != other {
		t.Error("an error without advice was changed")
	}
}
