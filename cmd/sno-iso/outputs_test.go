package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/bipgen"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// outputsGolden holds the description of every run of outputCases (describeRun), recorded
// with SNO_ISO_RECORD_OUTPUTS=1 (and SNO_ISO_BIN=binary to record another build's); a run
// whose description differs fails with the lines that differ.
const outputsGolden = "testdata/outputs.txt"

// outputCase is one command line, run in a directory holding iso.iso (a copy of fixture),
// custom.iso (iso.iso with user.ign embedded), node.ign (a generated bootstrap-in-place config), sno.yaml, eth0.nmconnection and
// user.ign.
type outputCase struct {
	name, fixture string
	args          []string
}

// Rebuilt ISOs (a minimal ISO without miniso.dat, a grown embed area) are left out: the
// binary the digests were recorded with stamped the time into them.
var outputCases = []outputCase{
	{"inspect-2020-09", "embed-areas-2020-09.iso", []string{"inspect", "iso.iso"}},
	{"inspect-json-2020-09", "embed-areas-2020-09.iso", []string{"inspect", "--json", "iso.iso"}},
	{"inspect-json-2021-01", "embed-areas-2021-01.iso", []string{"inspect", "--json", "iso.iso"}},
	{"inspect-json-2021-12", "embed-areas-2021-12.iso", []string{"inspect", "--json", "iso.iso"}},
	{"inspect-json-2023-07-x86_64", "embed-areas-2023-07.x86_64.iso", []string{"inspect", "--json", "iso.iso"}},
	{"inspect-json-2023-07-s390x", "embed-areas-2023-07.s390x.iso", []string{"inspect", "--json", "iso.iso"}},
	{"inspect-2023-07-x86_64", "embed-areas-2023-07.x86_64.iso", []string{"inspect", "iso.iso"}},
	{"build", "embed-areas-2023-07.x86_64.iso", []string{"build", "--iso", "iso.iso", "--ignition", "node.ign", "--config", "sno.yaml", "-o", "out.iso"}},
	{"build-flags", "embed-areas-2021-12.iso", []string{"build", "--iso", "iso.iso", "--ignition", "node.ign", "--installation-disk", "/dev/sdb",
		"--append-karg", "nosmt", "--wipe-disk", "--live-karg-append", "ip=dhcp", "-o", "out.iso"}},
	{"build-stdout", "embed-areas-2023-07.s390x.iso", []string{"build", "--iso", "iso.iso", "--ignition", "node.ign", "--installation-disk", "/dev/dasda", "-o", "-"}},
	{"build-minimal-miniso", "embed-areas-2023-07.x86_64.iso", []string{"build", "--iso", "iso.iso", "--ignition", "node.ign", "--config", "sno.yaml",
		"--minimal", "--rootfs-url", "http://192.0.2.1/rootfs.img", "-o", "out.iso"}},
	{"build-customized-iso", "embed-areas-2023-07.x86_64.iso", []string{"build", "--iso", "custom.iso", "--ignition", "node.ign", "--installation-disk", "/dev/sda"}},
	{"build-keyfile-without-support", "embed-areas-2021-01.iso", []string{"build", "--iso", "iso.iso", "--ignition", "node.ign", "--installation-disk", "/dev/sda",
		"--network-keyfile", "eth0.nmconnection", "-o", "out.iso"}},
	{"build-live-karg-without-areas", "embed-areas-2020-09.iso", []string{"build", "--iso", "iso.iso", "--ignition", "node.ign", "--installation-disk", "/dev/sda",
		"--live-karg-append", "ip=dhcp", "-o", "out.iso"}},
	{"build-not-bip", "embed-areas-2023-07.x86_64.iso", []string{"build", "--iso", "iso.iso", "--ignition", "user.ign", "--installation-disk", "/dev/sda", "-o", "out.iso"}},
	{"build-any-ignition", "embed-areas-2023-07.x86_64.iso", []string{"build", "--iso", "iso.iso", "--ignition", "user.ign", "--allow-any-ignition", "-o", "out.iso"}},
	{"pxe-build", "embed-areas-2023-07.x86_64.iso", []string{"pxe", "build", "--iso", "iso.iso", "--ignition", "node.ign", "--config", "sno.yaml", "-o", "pxe"}},
	{"pxe-build-base-url", "embed-areas-2023-07.x86_64.iso", []string{"pxe", "build", "--iso", "iso.iso", "--ignition", "node.ign", "--config", "sno.yaml",
		"--base-url", "http://192.0.2.1/sno/", "-o", "pxe"}},
	{"pxe-extract", "embed-areas-2023-07.x86_64.iso", []string{"pxe", "extract", "iso.iso", "-o", "pxe"}},
	{"pxe-ignition-wrap", "embed-areas-2023-07.x86_64.iso", []string{"pxe", "ignition", "wrap", "-i", "user.ign", "-o", "user.img"}},
	{"minimal-miniso", "embed-areas-2023-07.x86_64.iso", []string{"minimal", "--rootfs-url", "http://192.0.2.1/rootfs.img", "--output-rootfs", "rootfs.img", "iso.iso", "min.iso"}},
	{"ignition-embed", "embed-areas-2021-12.iso", []string{"ignition", "embed", "-i", "user.ign", "-o", "out.iso", "iso.iso"}},
	{"ignition-show", "embed-areas-2023-07.x86_64.iso", []string{"ignition", "show", "custom.iso"}},
	{"kargs-modify", "embed-areas-2023-07.x86_64.iso", []string{"kargs", "modify", "-a", "ip=dhcp", "-d", "mitigations=auto,nosmt", "-o", "out.iso", "iso.iso"}},
	{"kargs-show", "embed-areas-2021-12.iso", []string{"kargs", "show", "iso.iso"}},
	{"network-embed", "embed-areas-2023-07.x86_64.iso", []string{"network", "embed", "-k", "eth0.nmconnection", "-o", "net.iso", "iso.iso"}},
	{"reset", "embed-areas-2023-07.x86_64.iso", []string{"reset", "-o", "reset.iso", "custom.iso"}},
	{"machineconfig", "embed-areas-2023-07.x86_64.iso", []string{"machineconfig", "--role", "master", "user.ign"}},
}

const outputsSnoYAML = `coreOSInstallation:
  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3
  appendKargs: [nosmt]
liveKargs:
  append: [ip=192.0.2.10::192.0.2.1:255.255.255.0::ens3:none]
`

const outputsUserIgnition = `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hello"}}]}}`

// TestOutputsUnchanged runs every command on the fixtures and compares what it wrote (stdout,
// stderr, exit code and every file) with the recorded description of each run: the bytes'
// SHA-256 and, for an ISO, its volume, embed areas, kernel arguments, embedded Ignition
// files and ISO files; for an initramfs, its members. A change fails with the lines that
// differ, which name what changed.
func TestOutputsUnchanged(t *testing.T) {
	bin := os.Getenv("SNO_ISO_BIN")
	if bin == "" {
		bin = snoISO(t)
	}
	bip, err := bipgen.Generate(bipgen.Options{Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range outputCases {
		dir := t.TempDir()
		iso := fixtures.Bytes(t, c.fixture)
		inputs := map[string][]byte{
			"iso.iso": iso, "node.ign": bip, "sno.yaml": []byte(outputsSnoYAML), "user.ign": []byte(outputsUserIgnition),
			"eth0.nmconnection": []byte("[connection]\nid=eth0\ntype=ethernet\n\n[ipv4]\nmethod=auto\n"),
		}
		for name, data := range inputs {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// A customized ISO, for the commands that read one.
		if prep := runBinary(t, bin, dir, nil, "ignition", "embed", "-i", "user.ign", "-o", "custom.iso", "iso.iso"); prep.code != 0 {
			t.Fatalf("%s: preparing custom.iso: %s", c.name, prep.stderr)
		}
		r := runBinary(t, bin, dir, nil, c.args...)
		got[c.name] = describeRun(t, dir, r)
	}
	if os.Getenv("SNO_ISO_RECORD_OUTPUTS") != "" {
		var b strings.Builder
		for _, c := range outputCases {
			fmt.Fprintf(&b, "=== %s\n%s", c.name, got[c.name])
		}
		if err := os.WriteFile(outputsGolden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skipf("recorded %s with %s", outputsGolden, bin)
	}
	want := readOutputsGolden(t)
	for _, c := range outputCases {
		if w, ok := want[c.name]; !ok {
			t.Errorf("%s: nothing recorded in %s", c.name, outputsGolden)
		} else if got[c.name] != w {
			t.Errorf("%s (sno-iso %s): the output differs from the one recorded in %s (- recorded, + now):\n%s",
				c.name, strings.Join(c.args, " "), outputsGolden, lineDiff(w, got[c.name]))
		}
	}
}

// describeRun describes the exit code, stdout, stderr (with dir written as ".") and every
// file under dir, one fact a line.
func describeRun(t *testing.T, dir string, r result) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "exit %d\n", r.code)
	describeBytes(&b, "stdout", []byte(strings.ReplaceAll(string(r.stdout), dir, ".")))
	describeBytes(&b, "stderr", []byte(strings.ReplaceAll(string(r.stderr), dir, ".")))
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		describeBytes(&b, filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// describeBytes writes a line with the size and SHA-256 of data, then what it holds: an
// ISO's structure, an initramfs's members, or a short text's lines.
func describeBytes(b *strings.Builder, name string, data []byte) {
	fmt.Fprintf(b, "%s: %d bytes, sha256 %x\n", name, len(data), sha256.Sum256(data))
	if len(data) == 0 {
		return
	}
	if iso, err := isobuilder.OpenReader(bytes.NewReader(data), int64(len(data))); err == nil {
		describeISO(b, name, iso, data)
		return
	}
	if strings.HasSuffix(name, ".img") {
		if files, err := initrd.Read(bytes.NewReader(data), initrd.ReadOptions{}); err == nil {
			describeFiles(b, name+" member", files)
			return
		}
	}
	if len(data) <= 16<<10 && utf8.Valid(data) && !bytes.ContainsRune(data, 0) {
		for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
			fmt.Fprintf(b, "%s| %s\n", name, line)
		}
	}
}

// describeISO writes the volume ID, the embed areas with what they hold, and every file.
func describeISO(b *strings.Builder, name string, iso *isobuilder.LiveISO, data []byte) {
	fmt.Fprintf(b, "%s: volume %q, arch %s\n", name, iso.Volume().VolumeID, iso.Arch())
	area := iso.IgnitionArea()
	fmt.Fprintf(b, "%s: ignition area %s at %d, %d bytes (%s)\n", name, area.File, area.Offset, area.Length, area.Source)
	if cfg, err := iso.EmbeddedIgnition(); err != nil {
		fmt.Fprintf(b, "%s: embedded ignition: %v\n", name, err)
	} else if cfg != nil {
		describeIgnition(b, name+" embedded ignition", cfg)
	}
	if keyfiles, err := iso.EmbeddedKeyfiles(); err == nil {
		describeFiles(b, name+" embedded keyfile", keyfiles)
	}
	if k := iso.Kargs(); k != nil {
		fmt.Fprintf(b, "%s: kargs default %q (%s)\n", name, k.Default, k.Source)
		for _, a := range k.Areas {
			text, _, _ := bytes.Cut(data[min(a.Offset, int64(len(data))):min(a.End(), int64(len(data)))], []byte{a.Terminator})
			fmt.Fprintf(b, "%s: kargs area %s at %d: %q\n", name, a.File, a.Offset, text)
		}
	}
	err := iso.Volume().Walk(func(e isobuilder.WalkEntry) error {
		if !e.Dir {
			end := min(e.Offset()+int64(e.Length), int64(len(data)))
			fmt.Fprintf(b, "%s: file %s %d bytes, sha256 %x\n", name, e.DisplayPath, e.Length, sha256.Sum256(data[e.Offset():end]))
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(b, "%s: walking the files: %v\n", name, err)
	}
}

// describeIgnition writes the config's size and digest, then the digest of each file's
// contents and each systemd unit it carries, so a change names the file or unit.
func describeIgnition(b *strings.Builder, name string, cfg []byte) {
	fmt.Fprintf(b, "%s: %d bytes, sha256 %x\n", name, len(cfg), sha256.Sum256(cfg))
	var parsed struct {
		Storage struct {
			Files []struct {
				Path     string
				Contents struct{ Source string }
			}
		}
		Systemd struct {
			Units []struct {
				Name     string
				Enabled  *bool
				Contents string
			}
		}
	}
	if err := json.Unmarshal(cfg, &parsed); err != nil {
		fmt.Fprintf(b, "%s: not JSON: %v\n", name, err)
		return
	}
	for _, f := range parsed.Storage.Files {
		fmt.Fprintf(b, "%s: file %s, source sha256 %x\n", name, f.Path, sha256.Sum256([]byte(f.Contents.Source)))
	}
	for _, u := range parsed.Systemd.Units {
		fmt.Fprintf(b, "%s: unit %s, contents sha256 %x\n", name, u.Name, sha256.Sum256([]byte(u.Contents)))
	}
}

func describeFiles(b *strings.Builder, name string, files initrd.Files) {
	for _, p := range files.Paths() {
		fmt.Fprintf(b, "%s %s: %d bytes, sha256 %x\n", name, p, len(files[p]), sha256.Sum256(files[p]))
	}
}

// readOutputsGolden returns each case's recorded description.
func readOutputsGolden(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(outputsGolden)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, section := range strings.Split(string(data), "=== ")[1:] {
		name, body, _ := strings.Cut(section, "\n")
		want[name] = body
	}
	return want
}

// lineDiff lists the lines only in want (-) and only in got (+), in order, from a longest
// common subsequence of the two.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	// common[i][j] is the length of a longest common subsequence of w[i:] and g[j:].
	common := make([][]int, len(w)+1)
	for i := range common {
		common[i] = make([]int, len(g)+1)
	}
	for i := len(w) - 1; i >= 0; i-- {
		for j := len(g) - 1; j >= 0; j-- {
			if w[i] == g[j] {
				common[i][j] = common[i+1][j+1] + 1
			} else {
				common[i][j] = max(common[i+1][j], common[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < len(w) || j < len(g) {
		switch {
		case i < len(w) && j < len(g) && w[i] == g[j]:
			i, j = i+1, j+1
		case i < len(w) && (j == len(g) || common[i+1][j] >= common[i][j+1]):
			fmt.Fprintf(&b, "- %s\n", w[i])
			i++
		default:
			fmt.Fprintf(&b, "+ %s\n", g[j])
			j++
		}
	}
	return b.String()
}

func TestLineDiff(t *testing.T) {
	want := "exit 0\nout.iso: kargs \"a\"\nout.iso: file x\nkept\n"
	got := "exit 0\nout.iso: kargs \"b\"\nkept\nout.iso: file y\n"
	if d, w := lineDiff(want, got), "- out.iso: kargs \"a\"\n- out.iso: file x\n+ out.iso: kargs \"b\"\n+ out.iso: file y\n"; d != w {
		t.Errorf("lineDiff:\n%s\nwant:\n%s", d, w)
	}
	if d := lineDiff(want, want); d != "" {
		t.Errorf("lineDiff of equal texts: %q", d)
	}
}
