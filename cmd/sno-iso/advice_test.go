package main

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/isobuilder"
)

func TestErrorTextAddsAdvice(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("node.ign: %w", coreos.ErrNotBootstrapInPlace), "node.ign: " + coreos.ErrNotBootstrapInPlace.Error() + ", or pass --allow-any-ignition to embed this config unchanged"},
		{fmt.Errorf("%w (the Ignition area in IMAGES/IGNITION.IMG is not empty)", isobuilder.ErrCustomized),
			"cannot operate on ISO with embedded customizations (the Ignition area in IMAGES/IGNITION.IMG is not empty); reset it with `sno-iso reset` (or `coreos-installer iso reset`), or start from the pristine ISO, and try again"},
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
