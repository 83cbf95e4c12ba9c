package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// Embedding in place into an ISO that others can read warns, naming chmod 600: the config's
// keys would otherwise become readable without a word. A private ISO gets no warning.
func TestInPlaceEmbedIntoReadableISOWarns(t *testing.T) {
	src := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	cfg := filepath.Join(t.TempDir(), "config.ign")
	if err := os.WriteFile(cfg, []byte(smallConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	keyfile := filepath.Join(t.TempDir(), "eth0.nmconnection")
	if err := os.WriteFile(keyfile, []byte("[connection]\nid=eth0\ntype=ethernet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"ignition", "embed", "-i", cfg}, {"network", "embed", "-k", keyfile}} {
		for _, perm := range []os.FileMode{0o644, 0o640, 0o600} {
			iso := filepath.Join(t.TempDir(), "live.iso")
			copyFile(t, src, iso)
			if err := os.Chmod(iso, perm); err != nil {
				t.Fatal(err)
			}
			r := sno(t, nil, append(args, iso)...)
			if r.code != 0 {
				t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
			}
			warned := strings.Contains(string(r.stderr), "chmod 600 "+iso)
			if want := perm&0o077 != 0; warned != want {
				t.Errorf("%v into a %v ISO: warned %v, want %v; stderr:\n%s", args, perm, warned, want, r.stderr)
			}
		}
	}
}
