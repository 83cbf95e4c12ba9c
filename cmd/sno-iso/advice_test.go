package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	"github.com/urfave/cli/v2"
)

func TestErrorTextAddsAdvice(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("node.ign: %w", coreos.ErrNotBootstrapInPlace), "node.ign: " + coreos.ErrNotBootstrapInPlace.Error() + ", or pass --allow-any-ignition to embed this config unchanged"},
		{fmt.Errorf("%w (the Ignition area in IMAGES/IGNITION.IMG is not empty)", isobuilder.ErrCustomized),
			"Cannot operate on ISO with embedded customizations (the Ignition area in IMAGES/IGNITION.IMG is not empty); reset it with `sno-iso reset` (or `coreos-installer iso reset`), or start from the pristine ISO, and try again"},
		{isobuilder.ErrHasIgnition, "this ISO already has an embedded Ignition config; use -f to replace it"},
		{isobuilder.ErrHasKeyfiles, "this ISO already has embedded network settings; use -f to replace them"},
		{errors.New("plain"), "plain"},
	} {
		if got := errorText(c.err); got != c.want {
			t.Errorf("errorText(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestForceAdvice(t *testing.T) {
	exists := fmt.Errorf("writing out.iso: %w", fs.ErrExist)
	if got := forceAdvice(exists); got.Error() != "writing out.iso: file already exists; use --force to replace it" || !errors.Is(got, fs.ErrExist) {
		t.Errorf("forceAdvice(exists) = %v", got)
	}
	other := errors.New("disk full")
	if forceAdvice(other) != other || forceAdvice(nil) != nil {
		t.Error("forceAdvice changed an error that is not about an existing file")
	}
}

// The command line names its flag beside the setting a warning advises, and nothing else; a
// value a flag set is named by the flag, as the drop-in spells it under its name.
func TestPrintWarnings(t *testing.T) {
	var out strings.Builder
	disk := node.Warning{Kind: node.DiskWarning, Setting: "installationDisk", Text: "installationDisk: /dev/sda is a kernel name"}
	printWarnings(cli.NewContext(&cli.App{Name: "sno-iso", ErrWriter: &out}, nil, nil), []node.Warning{
		{Kind: node.LiveIPNotCopied, Setting: "copyNetwork: true", Text: "live kernel argument ip=dhcp configures the live system only: set copyNetwork: true so that the installed node keeps it"},
		{Kind: node.KeyfilesNotCopied, Text: "copyNetwork is false: keyfiles"},
		disk,
	})
	want := "Warning: live kernel argument ip=dhcp configures the live system only: set copyNetwork: true (or --copy-network) so that the installed node keeps it\n" +
		"Warning: copyNetwork is false: keyfiles\n" +
		"Warning: --installation-disk: /dev/sda is a kernel name\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	out.Reset()
	printWarnings(cli.NewContext(&cli.App{Name: dropInName, ErrWriter: &out}, nil, nil), []node.Warning{disk})
	if want := "Warning: --dest-device: /dev/sda is a kernel name\n"; out.String() != want {
		t.Errorf("the drop-in printed %q, want %q", out.String(), want)
	}
}
