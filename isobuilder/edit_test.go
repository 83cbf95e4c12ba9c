package isobuilder

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
)

// reopener returns a function that parses an edited image as the next command would parse
// the written file.
func reopener(t *testing.T) func(*Image, error) *LiveISO {
	return func(img *Image, err error) *LiveISO {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		l, err := OpenReader(img, img.Size())
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
}

// The Ignition config and the keyfiles are edited independently, each keeping the other.
func TestEditIgnitionAndKeyfiles(t *testing.T) {
	l, reopen := openLiveFixture(t, "embed-areas-2023-07.x86_64.iso"), reopener(t)
	if _, err := l.EmbeddedIgnition(); !errors.Is(err, ErrNoIgnition) {
		t.Errorf("pristine ISO: %v", err)
	}
	if _, err := l.EmbeddedKeyfiles(); !errors.Is(err, ErrNoKeyfiles) {
		t.Errorf("pristine ISO: %v", err)
	}
	cfg := []byte(`{"ignition":{"version":"3.2.0"}}`)
	keyfile := []byte("[connection]\nid=eth0\n")
	l = reopen(l.EmbedIgnition(cfg, false))
	l = reopen(l.EmbedKeyfiles(initrd.Files{initrd.NetworkDir + "/eth0.nmconnection": keyfile}, false))

	if _, err := l.EmbedIgnition(cfg, false); !errors.Is(err, ErrHasIgnition) {
		t.Errorf("embedding over a config without replace: %v", err)
	}
	if _, err := l.EmbedKeyfiles(initrd.Files{initrd.NetworkDir + "/eth1.nmconnection": keyfile}, false); !errors.Is(err, ErrHasKeyfiles) {
		t.Errorf("embedding over keyfiles without replace: %v", err)
	}
	// Replacing keyfiles replaces the set, not one file.
	replaced := reopen(l.EmbedKeyfiles(initrd.Files{initrd.NetworkDir + "/eth1.nmconnection": keyfile}, true))
	if got, err := replaced.EmbeddedKeyfiles(); err != nil || len(got) != 1 || got["eth1.nmconnection"] == nil {
		t.Errorf("replaced keyfiles %v, %v: want only eth1.nmconnection", got.Paths(), err)
	}

	noIgnition := reopen(l.RemoveIgnition())
	if got, err := noIgnition.EmbeddedKeyfiles(); err != nil || !bytes.Equal(got["eth0.nmconnection"], keyfile) {
		t.Errorf("keyfiles after removing the config: %v, %v", got, err)
	}
	noKeyfiles := reopen(l.RemoveKeyfiles())
	if got, err := noKeyfiles.EmbeddedIgnition(); err != nil || !bytes.Equal(got, cfg) {
		t.Errorf("config after removing the keyfiles: %q, %v", got, err)
	}
	if _, err := noKeyfiles.EmbeddedKeyfiles(); !errors.Is(err, ErrNoKeyfiles) {
		t.Errorf("after removing the keyfiles: %v", err)
	}
}

// Keyfiles go only into an ISO whose live initramfs reads them, whatever the area holds.
func TestEmbedKeyfilesNeedsNetworkSupport(t *testing.T) {
	l := openLiveFixture(t, "embed-areas-2021-01.iso")
	if _, err := l.EmbedKeyfiles(initrd.Files{initrd.NetworkDir + "/eth0.nmconnection": []byte("[connection]\n")}, true); !errors.Is(err, ErrNoNetworkSupport) {
		t.Errorf("keyfiles into an ISO without live-initrd-network: %v", err)
	}
}

func TestEmbedIgnitionTooLarge(t *testing.T) {
	l := openLiveFixture(t, "embed-areas-2023-07.x86_64.iso")
	// Incompressible bytes larger than the 256 KiB area.
	big := make([]byte, 300<<10)
	rand.New(rand.NewSource(1)).Read(big)
	var tooLarge *TooLargeError
	if _, err := l.EmbedIgnition(big, false); !errors.As(err, &tooLarge) {
		t.Errorf("a config larger than the area: %v", err)
	}
}

// Kargs edits reach every area; reset puts the defaults back without reading the current
// ones, and Reset also empties the Ignition area.
func TestEditKargsAndReset(t *testing.T) {
	l, reopen := openLiveFixture(t, "embed-areas-2023-07.x86_64.iso"), reopener(t)
	defaults := l.Kargs().Default
	edited := reopen(l.ModifyKargs([]string{"ip=dhcp"}, nil, nil))
	if got, err := edited.CurrentKargs(); err != nil || got != defaults+" ip=dhcp" {
		t.Errorf("modified kargs %q, %v", got, err)
	}
	if got, _ := reopen(edited.ResetKargs()).CurrentKargs(); got != defaults {
		t.Errorf("reset kargs %q, want %q", got, defaults)
	}
	customized := reopen(edited.EmbedIgnition([]byte("{}"), false))
	reset := reopen(customized.Reset())
	if got, _ := reset.CurrentKargs(); got != defaults {
		t.Errorf("kargs after Reset %q, want %q", got, defaults)
	}
	if err := reset.CheckPristine(); err != nil {
		t.Errorf("after Reset: %v", err)
	}

	old := openLiveFixture(t, "embed-areas-2020-09.iso")
	if _, err := old.ModifyKargs([]string{"ip=dhcp"}, nil, nil); !errors.Is(err, embed.ErrNoKargs) {
		t.Errorf("modifying kargs without areas: %v", err)
	}
	if _, err := old.ResetKargs(); !errors.Is(err, embed.ErrNoKargs) {
		t.Errorf("resetting kargs without areas: %v", err)
	}
	if _, err := old.Reset(); err != nil {
		t.Errorf("Reset of an ISO without kargs areas: %v", err)
	}
}
