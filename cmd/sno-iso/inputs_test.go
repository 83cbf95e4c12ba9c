package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// TestOutputNeverReplacesAnInput: an output named like one of the command's inputs (by the
// same path, another spelling or a hard link) is refused, --force or not, and every input
// keeps its bytes; nothing else is left in the directory.
func TestOutputNeverReplacesAnInput(t *testing.T) {
	dir := t.TempDir()
	iso := writeTestFile(t, dir, "in.iso", fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"))
	ign := bipConfig(t, dir, 0)
	cfg := writeFile(t, filepath.Join(dir, "c.ign"), smallConfig)
	user := writeFile(t, filepath.Join(dir, "user.ign"), outputsUserIgnition)
	key := writeFile(t, filepath.Join(dir, "eth0.nmconnection"), "[connection]\nid=eth0\ntype=ethernet\n\n[ipv4]\nmethod=auto\n")
	config := writeFile(t, filepath.Join(dir, "sno.yaml"), "coreOSInstallation:\n  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3\nnetwork:\n  keyfiles: [eth0.nmconnection]\n")
	pxe := filepath.Join(dir, "pxe")
	if err := os.Mkdir(pxe, 0o755); err != nil {
		t.Fatal(err)
	}
	inPXE := writeTestFile(t, pxe, "boot.ipxe", fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"))
	link := filepath.Join(dir, "link.iso")
	if err := os.Link(iso, link); err != nil {
		t.Fatal(err)
	}
	inputs := []string{iso, ign, cfg, user, key, config, inPXE}
	before := map[string]string{}
	for _, p := range inputs {
		before[p] = fileSHA(t, p)
	}
	entries := dirEntries(t, dir)
	disk := []string{"--installation-disk", "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"minimal over its ISO", []string{"minimal", "-f", iso, iso}},
		{"minimal rootfs over its ISO", []string{"minimal", "-f", "--output-rootfs", "./in.iso", iso, filepath.Join(dir, "m.iso")}},
		{"build --minimal over its ISO", append([]string{"build", "--iso", iso, "--ignition", ign, "--minimal", "--rootfs-url", "http://192.0.2.1/rootfs.img", "-f", "-o", iso}, disk...)},
		{"build over its config", append([]string{"build", "--iso", iso, "--ignition", ign, "-f", "-o", ign}, disk...)},
		{"build over a keyfile its sno.yaml names", []string{"build", "--iso", iso, "--ignition", ign, "--config", config, "-f", "-o", key}},
		{"build over a hard link of its ISO", append([]string{"build", "--iso", iso, "--ignition", ign, "-f", "-o", link}, disk...)},
		{"ignition embed over its config", []string{"ignition", "embed", "-f", "-i", cfg, "-o", cfg, iso}},
		{"pxe ignition wrap over its config", []string{"pxe", "ignition", "wrap", "-f", "-i", cfg, "-o", cfg}},
		{"pxe build over its ISO", append([]string{"pxe", "build", "--iso", inPXE, "--ignition", ign, "-f", "-o", pxe}, disk...)},
		{"machineconfig over its config", []string{"machineconfig", "--role", "master", "-f", "-o", user, user}},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantFailure(t, snoIn(t, dir, nil, c.args...), "the output is one of the inputs")
			for _, p := range inputs {
				if fileSHA(t, p) != before[p] {
					t.Fatalf("%s changed", p)
				}
			}
			if got := dirEntries(t, dir); strings.Join(got, " ") != strings.Join(entries, " ") {
				t.Errorf("files now %v, were %v", got, entries)
			}
			if got := dirEntries(t, pxe); len(got) != 1 {
				t.Errorf("%s now holds %v", pxe, got)
			}
		})
	}
}

// TestStdoutNeverAnInput: standard output opened onto the input ISO (1<>in.iso) is refused
// before a byte is written.
func TestStdoutNeverAnInput(t *testing.T) {
	dir := t.TempDir()
	iso := writeTestFile(t, dir, "in.iso", fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"))
	cfg := writeFile(t, filepath.Join(dir, "c.ign"), smallConfig)
	before := fileSHA(t, iso)
	out, err := os.OpenFile(iso, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var stderr strings.Builder
	if code := run([]string{"sno-iso", "ignition", "embed", "-i", cfg, "-o", "-", iso}, nil, out, &stderr); code == 0 ||
		!strings.Contains(stderr.String(), "writing to standard output: the output is one of the inputs ("+iso+")") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
	if fileSHA(t, iso) != before {
		t.Error("the input ISO changed")
	}
}

// TestOptionWithoutValueRefused: an option left without its value at the end of the command
// line (-o "$OUT" unquoted with OUT unset) is a usage error, never given the "--" that ends
// the options: kargs modify ISO -a appended "--" to the ISO in place, and -o wrote ./--.
func TestOptionWithoutValueRefused(t *testing.T) {
	dir := t.TempDir()
	iso := writeTestFile(t, dir, "in.iso", fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"))
	cfg := writeFile(t, filepath.Join(dir, "c.ign"), smallConfig)
	before := fileSHA(t, iso)
	entries := dirEntries(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"kargs", "modify", iso, "-a"}, "--append (-a) needs a value"},
		{[]string{"kargs", "modify", "-a", "quiet", iso, "-d"}, "--delete (-d) needs a value"},
		{[]string{"ignition", "embed", "-i", cfg, iso, "-o"}, "--output (-o) needs a value"},
		{[]string{"minimal", iso, "m.iso", "--output-rootfs"}, "--output-rootfs needs a value"},
		{[]string{"network", "extract", iso, "-C"}, "--directory (-C) needs a value"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := snoIn(t, dir, nil, c.args...)
			wantFailure(t, r, c.want)
			if r.code != 2 {
				t.Errorf("exit %d, want 2 (usage)", r.code)
			}
			if fileSHA(t, iso) != before {
				t.Fatal("the ISO changed")
			}
			if got := dirEntries(t, dir); strings.Join(got, " ") != strings.Join(entries, " ") {
				t.Errorf("files now %v, were %v", got, entries)
			}
		})
	}
}
