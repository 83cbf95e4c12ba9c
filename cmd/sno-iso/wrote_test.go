package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// TestEveryWriteSaysWhatItWrote: each command that writes a file says "Wrote PATH" in a line
// of standard error, PATH absolute, and prints nothing on standard output; in place it
// names the ISO; with -o - standard output carries the data and no "Wrote" line appears; the
// coreos-installer drop-in says it too, on standard error only.
func TestEveryWriteSaysWhatItWrote(t *testing.T) {
	dir := t.TempDir()
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	cfg := writeFile(t, filepath.Join(dir, "config.ign"), `{"ignition":{"version":"3.2.0"}}`)
	key := writeFile(t, filepath.Join(dir, "eth0.nmconnection"),
		"[connection]\nid=eth0\ntype=ethernet\ninterface-name=eth0\n\n[ipv4]\nmethod=auto\n")
	// Each command line writes to OUT (a file that does not exist yet) or edits ISO in place
	// when it has no OUT.
	for _, args := range [][]string{
		{"ignition", "embed", "-i", cfg, "-o", "OUT", "ISO"},
		{"ignition", "embed", "-i", cfg, "ISO"},
		{"ignition", "remove", "-o", "OUT", "ISO"},
		{"kargs", "modify", "-a", "quiet", "-o", "OUT", "ISO"},
		{"kargs", "reset", "-o", "OUT", "ISO"},
		{"network", "embed", "-k", key, "-o", "OUT", "ISO"},
		{"network", "remove", "-o", "OUT", "ISO"},
		{"reset", "-o", "OUT", "ISO"},
		{"pxe", "ignition", "wrap", "-i", cfg, "-o", "OUT"},
	} {
		name := strings.ReplaceAll(strings.Join(args, " "), dir+"/", "")
		t.Run(name, func(t *testing.T) {
			work := t.TempDir()
			copyISO := filepath.Join(work, "rhcos.iso")
			copyFile(t, iso, copyISO)
			out := filepath.Join(work, "out")
			written := copyISO
			line := make([]string, len(args))
			for i, a := range args {
				switch a {
				case "OUT":
					line[i], written = out, out
				case "ISO":
					line[i] = copyISO
				default:
					line[i] = a
				}
			}
			r := sno(t, nil, line...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if want := "Wrote " + written; !slices.Contains(strings.Split(string(r.stderr), "\n"), want) {
				t.Errorf("standard error %q has no line %q", r.stderr, want)
			}
			if len(r.stdout) != 0 {
				t.Errorf("standard output carries %q, want nothing", r.stdout)
			}
		})
	}
	t.Run("standard output", func(t *testing.T) {
		r := sno(t, nil, "ignition", "embed", "-i", cfg, "-o", "-", iso)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if strings.Contains(string(r.stderr), "Wrote") || len(r.stdout) == 0 {
			t.Errorf("with -o -: standard error %q, %d bytes on standard output; want the ISO and no Wrote line", r.stderr, len(r.stdout))
		}
	})
	t.Run("drop-in", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.iso")
		r := runBinary(t, dropInBinary(t), "", nil, "iso", "ignition", "embed", "-i", cfg, "-o", out, iso)
		if r.code != 0 || string(r.stderr) != "Wrote "+out+"\n" || len(r.stdout) != 0 {
			t.Errorf("coreos-installer iso ignition embed: exit %d, stdout %q, stderr %q; want only Wrote %s on standard error", r.code, r.stdout, r.stderr, out)
		}
	})
}
