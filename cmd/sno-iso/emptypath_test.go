package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// emptyPathFixture is a directory with an ISO, an Ignition config and a keyfile.
type emptyPathFixture struct {
	dir, iso, cfg, key string
}

func newEmptyPathFixture(t *testing.T) emptyPathFixture {
	dir := t.TempDir()
	f := emptyPathFixture{dir: dir, iso: filepath.Join(dir, "in.iso"), cfg: filepath.Join(dir, "c.ign"), key: filepath.Join(dir, "eth0.nmconnection")}
	os.WriteFile(f.iso, fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"), 0o644)
	os.WriteFile(f.cfg, []byte(smallConfig), 0o644)
	os.WriteFile(f.key, []byte("[connection]\nid=eth0\ntype=ethernet\n"), 0o600)
	return f
}

// wantRefused runs each command line with bin in the fixture's directory, with stdin, and
// checks that it is a usage error (exit 2) naming the empty option, that nothing reaches
// standard output, and that nothing in the directory changed.
func (f emptyPathFixture) wantRefused(t *testing.T, bin string, stdin []byte, cases [][]string) {
	before := fileSHA(t, f.iso)
	entries := dirEntries(t, f.dir)
	for _, args := range cases {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			r := runBinary(t, bin, f.dir, stdin, args...)
			wantFailure(t, r, "empty")
			if r.code != 2 {
				t.Errorf("exit code %d, want 2 (usage error)", r.code)
			}
			if len(r.stdout) != 0 {
				t.Errorf("wrote to standard output: %q", r.stdout)
			}
			if fileSHA(t, f.iso) != before {
				t.Fatal("the input ISO changed")
			}
			if got := dirEntries(t, f.dir); strings.Join(got, " ") != strings.Join(entries, " ") {
				t.Errorf("files now %v, were %v", got, entries)
			}
		})
	}
}

// TestEmptyOutputIsUsageError: an output option given an empty value (an unset shell
// variable) is refused with exit 2 by every command that writes, never taken as "edit the
// input in place" or "use the default name", and nothing is written anywhere.
func TestEmptyOutputIsUsageError(t *testing.T) {
	f := newEmptyPathFixture(t)
	iso, cfg, key, dir := f.iso, f.cfg, f.key, f.dir
	f.wantRefused(t, snoISO(t), nil, [][]string{
		{"ignition", "embed", "-i", cfg, "-o", "", iso},
		{"ignition", "embed", "-i", cfg, "--output=", iso},
		{"ignition", "embed", "-f", "-i", cfg, "--output", "", iso},
		{"ignition", "remove", "-o", "", iso},
		{"network", "embed", "-k", key, "-o", "", iso},
		{"network", "remove", "--output=", iso},
		{"kargs", "modify", "-a", "x", "-o", "", iso},
		{"kargs", "reset", "-o", "", iso},
		{"reset", "-o", "", iso},
		{"build", "--iso", iso, "--ignition", cfg, "--installation-disk", "/dev/sda", "-o", ""},
		{"minimal", iso, ""},
		{"minimal", "--output-rootfs", "", iso, filepath.Join(dir, "min.iso")},
		{"machineconfig", "--role", "master", "-o", "", cfg},
		{"pxe", "extract", "-o", "", iso},
		{"pxe", "ignition", "wrap", "-i", cfg, "-o", ""},
		{"pxe", "build", "--iso", iso, "--ignition", cfg, "-o", ""},
	})
}

// TestEmptyInputIsUsageError: an option that names a file or directory to read, given an
// empty value, is refused with exit 2 naming it: `-i ""` never reads standard input (which
// holds a valid config here), `-C ""` never prints the keyfiles, and an empty --cache-dir,
// --secret-file or --tls-cert never falls back to a default or to plain HTTP.
func TestEmptyInputIsUsageError(t *testing.T) {
	f := newEmptyPathFixture(t)
	iso, cfg, key, dir := f.iso, f.cfg, f.key, f.dir
	const bmc = "https://127.0.0.1:1"
	build := []string{"build", "--installation-disk", "/dev/sda", "-o", filepath.Join(dir, "out.iso")}
	serve := []string{"serve", "--listen", "127.0.0.1:0", "--iso", iso}
	f.wantRefused(t, snoISO(t), []byte(smallConfig), [][]string{
		{"ignition", "embed", "-i", "", iso},
		{"ignition", "embed", "--ignition-file=", "-o", filepath.Join(dir, "out.iso"), iso},
		{"network", "extract", "-C", "", iso},
		{"network", "extract", "--directory=", iso},
		{"network", "embed", "-k", key, "-k", "", iso},
		{"pxe", "ignition", "wrap", "-i", "", "-o", filepath.Join(dir, "out.img")},
		{"machineconfig", "--role", "master", "--base", "", cfg},
		append(build, "--iso", "", "--ignition", cfg),
		append(build, "--iso", iso, "--ignition", ""),
		append(build, "--iso", iso, "--ignition", cfg, "--config", ""),
		append(build, "--iso", iso, "--ignition", cfg, "--install-config="),
		append(build, "--iso", iso, "--ignition", cfg, "--customize", ""),
		append(build, "--iso", iso, "--ignition", cfg, "--network-keyfile", ""),
		append(build, "--stream", "", "--ignition", cfg),
		append(build, "--stream", "-", "--ignition", cfg, "--cache-dir", ""),
		append(build, "--stream", "-", "--ignition", cfg, "--keyring", ""),
		{"download", "--stream", ""},
		{"download", "--stream", "-", "--cache-dir", dir, "-C", ""},
		append(serve, "--nodes", ""),
		append(serve, "--nodes", dir, "--secret-file", ""),
		append(serve, "--nodes", dir, "--tls-cert", "", "--tls-key", ""),
		{"serve", "urls", "--nodes", dir, "--secret-file="},
		{"bmc", "status", "--bmc", bmc, "--credentials-file", ""},
		{"bmc", "status", "--bmc", bmc, "--ca-file", ""},
		{"bmc", "boot", "--node", "", "--serve-url", "http://127.0.0.1:9"},
	})
	f.wantRefused(t, dropInBinary(t), []byte(smallConfig), [][]string{
		{"iso", "ignition", "embed", "-i", "", iso},
		{"iso", "embed", "-c", "", iso},
		{"iso", "network", "extract", "-C", "", iso},
		{"iso", "network", "embed", "-k", "", iso},
		{"pxe", "ignition", "wrap", "-i", ""},
	})
}
