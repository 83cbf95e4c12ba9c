package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// TestCoreOSInstallerPhrases provokes, on the real fixtures, each case that coreos-installer's
// ISO commands refuse and sno-iso refuses too, and checks that the error carries
// coreos-installer's phrase exactly (scripts and its image tests grep for it, case and all)
// inside sno-iso's fuller message, through sno-iso's spelling and the coreos-installer
// drop-in's. In the command lines ISO is a fresh copy of the fixture, OUT an output that does
// not exist, EXISTING one that does, CFG a small Ignition config, BIG one too large for the
// area and KEY a keyfile.
func TestCoreOSInstallerPhrases(t *testing.T) {
	cases := []struct {
		name, phrase, fixture string
		// prepare runs on the copy first, in sno-iso's spelling.
		prepare []string
		// corrupt changes the copy's bytes first.
		corrupt func([]byte) []byte
		// sno and dropIn are the refused command in each spelling; nil where that spelling
		// does not refuse the case.
		sno, dropIn []string
		// terminal runs the command with a terminal as standard output.
		terminal bool
	}{
		{name: "embed twice", phrase: "already has an embedded Ignition config", fixture: "embed-areas-2023-07.x86_64.iso",
			prepare: []string{"ignition", "embed", "-i", "CFG", "ISO"},
			sno:     []string{"ignition", "embed", "-i", "CFG", "ISO"}, dropIn: []string{"iso", "ignition", "embed", "-i", "CFG", "ISO"}},
		{name: "show nothing", phrase: "No embedded Ignition config", fixture: "embed-areas-2023-07.x86_64.iso",
			sno: []string{"ignition", "show", "ISO"}, dropIn: []string{"iso", "ignition", "show", "ISO"}},
		{name: "payload too large", phrase: "too large", fixture: "embed-areas-2023-07.x86_64.iso",
			sno: []string{"ignition", "embed", "-i", "BIG", "-o", "OUT", "ISO"}, dropIn: []string{"iso", "ignition", "embed", "-i", "BIG", "-o", "OUT", "ISO"}},
		{name: "keyfiles twice", phrase: "already has embedded network settings", fixture: "embed-areas-2023-07.x86_64.iso",
			prepare: []string{"network", "embed", "-k", "KEY", "ISO"},
			sno:     []string{"network", "embed", "-k", "KEY", "ISO"}, dropIn: []string{"iso", "network", "embed", "-k", "KEY", "ISO"}},
		{name: "extract no keyfiles", phrase: "No embedded network settings", fixture: "embed-areas-2023-07.x86_64.iso",
			sno: []string{"network", "extract", "ISO"}, dropIn: []string{"iso", "network", "extract", "ISO"}},
		{name: "kargs too long", phrase: "kargs too large for area", fixture: "embed-areas-2023-07.x86_64.iso",
			sno:    []string{"kargs", "modify", "-a", strings.Repeat("x", 1200), "ISO"},
			dropIn: []string{"iso", "kargs", "modify", "-a", strings.Repeat("x", 1200), "ISO"}},
		{name: "output exists", phrase: "File exists", fixture: "embed-areas-2023-07.x86_64.iso",
			sno: []string{"ignition", "embed", "-i", "CFG", "-o", "EXISTING", "ISO"}, dropIn: []string{"iso", "ignition", "embed", "-i", "CFG", "-o", "EXISTING", "ISO"}},
		{name: "minimal output exists", phrase: "File exists", fixture: "embed-areas-2023-07.x86_64.iso",
			sno: []string{"minimal", "ISO", "EXISTING"}, dropIn: []string{"iso", "extract", "minimal-iso", "ISO", "EXISTING"}},
		{name: "corrupt miniso source", phrase: "wrong final digest", fixture: "embed-areas-2021-12.iso",
			// The sed of coreos-installer's iso-extract-minimal-iso.sh: defaults and areas change
			// alike, so only the digest can tell.
			corrupt: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("coreos.liveiso"), []byte("codeos.liveiso")) },
			sno:     []string{"minimal", "ISO", "OUT"}, dropIn: []string{"iso", "extract", "minimal-iso", "ISO", "OUT"}},
		{name: "minimal of customized", phrase: "Cannot operate on ISO with embedded customizations", fixture: "embed-areas-2023-07.x86_64.iso",
			prepare: []string{"kargs", "modify", "-a", "foo=bar", "ISO"},
			sno:     []string{"minimal", "ISO", "OUT"}, dropIn: []string{"iso", "extract", "minimal-iso", "ISO", "OUT"}},
		{name: "embed into non-CoreOS", phrase: "Unrecognized CoreOS ISO image", fixture: "synthetic.iso",
			sno: []string{"ignition", "embed", "-i", "CFG", "ISO"}, dropIn: []string{"iso", "ignition", "embed", "-i", "CFG", "ISO"}},
		{name: "PXE of non-CoreOS", phrase: "Unrecognized CoreOS ISO image", fixture: "synthetic.iso",
			sno: []string{"pxe", "extract", "-o", "OUT", "ISO"}, dropIn: []string{"iso", "extract", "pxe", "-o", "OUT", "ISO"}},
		{name: "kargs of RHCOS 4.6", phrase: "No karg embed areas found", fixture: "embed-areas-2020-09.iso",
			sno: []string{"kargs", "show", "ISO"}, dropIn: []string{"iso", "kargs", "show", "ISO"}},
		{name: "kargs modify of RHCOS 4.6", phrase: "No karg embed areas found", fixture: "embed-areas-2020-09.iso",
			sno: []string{"kargs", "modify", "-a", "foo", "-o", "OUT", "ISO"}, dropIn: []string{"iso", "kargs", "modify", "-a", "foo", "-o", "OUT", "ISO"}},
		{name: "keyfiles on RHCOS 4.7", phrase: "does not support customizing network settings", fixture: "embed-areas-2021-01.iso",
			sno: []string{"network", "embed", "-k", "KEY", "ISO"}, dropIn: []string{"iso", "network", "embed", "-k", "KEY", "ISO"}},
		{name: "ISO to a terminal", phrase: "Refusing to write binary data to terminal", fixture: "embed-areas-2023-07.x86_64.iso", terminal: true,
			sno: []string{"ignition", "embed", "-i", "CFG", "-o", "-", "ISO"}, dropIn: []string{"iso", "ignition", "embed", "-i", "CFG", "-o", "-", "ISO"}},
		{name: "minimal ISO to a terminal", phrase: "Refusing to write binary data to terminal", fixture: "embed-areas-2023-07.x86_64.iso", terminal: true,
			sno: []string{"minimal", "ISO", "-"}, dropIn: []string{"iso", "extract", "minimal-iso", "ISO"}},
		{name: "initrd to a terminal", phrase: "Refusing to write binary data to terminal", fixture: "embed-areas-2023-07.x86_64.iso", terminal: true,
			sno: []string{"pxe", "ignition", "wrap", "-i", "CFG"}, dropIn: []string{"pxe", "ignition", "wrap", "-i", "CFG"}},
		// sno-iso minimal rebuilds such an ISO instead; only coreos-installer's command refuses.
		{name: "minimal without miniso.dat", phrase: "does not support extracting a minimal ISO", fixture: "embed-areas-2021-01.iso",
			dropIn: []string{"iso", "extract", "minimal-iso", "ISO", "OUT"}},
	}
	inputs := t.TempDir()
	cfg := writeTestFile(t, inputs, "config.ign", []byte(smallConfig))
	big := writeTestFile(t, inputs, "big.ign", incompressibleConfig(480<<10))
	key := writeTestFile(t, inputs, "eno1.nmconnection", []byte("[connection]\nid=eno1\n"))
	ci := dropInBinary(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, spelling := range []struct {
				bin  string
				args []string
			}{{snoISO(t), c.sno}, {ci, c.dropIn}} {
				if spelling.args == nil {
					continue
				}
				dir := t.TempDir()
				iso := filepath.Join(dir, "in.iso")
				b := fixtures.Bytes(t, c.fixture)
				if c.corrupt != nil {
					b = c.corrupt(b)
				}
				writeTestFile(t, dir, "in.iso", b)
				existing := writeTestFile(t, dir, "existing", []byte("keep me"))
				expand := strings.NewReplacer("ISO", iso, "OUT", filepath.Join(dir, "out"), "EXISTING", existing, "CFG", cfg, "BIG", big, "KEY", key)
				var args []string
				if c.prepare != nil {
					for _, a := range c.prepare {
						args = append(args, expand.Replace(a))
					}
					mustSno(t, nil, args...)
					args = nil
				}
				for _, a := range spelling.args {
					args = append(args, expand.Replace(a))
				}
				before := fileSHA(t, iso)
				cmd := exec.Command(spelling.bin, args...)
				if c.terminal {
					_, cmd.Stdout = openPTY(t)
				}
				r := runSno(t, cmd)
				msg := strings.TrimSuffix(strings.TrimPrefix(string(r.stderr), "Error: "), "\n")
				switch {
				case r.code != 1:
					t.Errorf("%s: exit %d, want 1; stderr %q", filepath.Base(spelling.bin), r.code, r.stderr)
				case !strings.HasPrefix(string(r.stderr), "Error: "):
					t.Errorf("%s: stderr %q does not start with \"Error: \"", filepath.Base(spelling.bin), r.stderr)
				case !strings.Contains(msg, c.phrase):
					t.Errorf("%s: error %q lacks coreos-installer's phrase %q", filepath.Base(spelling.bin), msg, c.phrase)
				case len(msg) <= len(c.phrase):
					t.Errorf("%s: error %q is only the phrase; it should say more", filepath.Base(spelling.bin), msg)
				}
				if fileSHA(t, iso) != before {
					t.Errorf("%s changed the input ISO", filepath.Base(spelling.bin))
				}
				if got, _ := os.ReadFile(existing); string(got) != "keep me" {
					t.Errorf("%s replaced an existing output", filepath.Base(spelling.bin))
				}
				if _, err := os.Lstat(filepath.Join(dir, "out")); err == nil {
					t.Errorf("%s left an output behind", filepath.Base(spelling.bin))
				}
			}
		})
	}
}

// writeTestFile writes data to dir/name and returns the path.
func writeTestFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
