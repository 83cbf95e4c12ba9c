package initrd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

// toolPackages names the Debian package of each tool these tests run.
var toolPackages = map[string]string{"xz": "xz-utils", "cpio": "cpio", "gzip": "gzip", "zstd": "zstd"}

// run runs a command with stdin and returns its stdout; a missing command ends the test through
// testenv.
func run(t *testing.T, dir string, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	testenv.Tool(t, name, toolPackages[name])
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// What Pack writes into a zero-filled area is read by `xz -dc | cpio`, as the coreos-installer
// tests do with dd | xzcat | cpio -i --to-stdout.
func TestPackReadByXZAndCpio(t *testing.T) {
	files := filesOf(IgnitionPath, "{\"ignition\": {\"version\": \"3.0.0\"}\n",
		NetworkDir+"/eth0.nmconnection", "[connection]\nid=eth0\n")
	area := make([]byte, 256<<10)
	copy(area, packOf(t, files))
	archive := run(t, "", area, "xz", "-dc")
	if !bytes.Equal(archive, newcOf(t, files)) {
		t.Fatalf("xz -dc gave %d bytes, not the newc archive", len(archive))
	}

	listing := strings.Split(strings.TrimSpace(string(run(t, "", archive, "cpio", "-itv", "--quiet"))), "\n")
	want := []struct{ mode, name string }{
		{"-rw-------", IgnitionPath},
		{"drwxr-xr-x", "etc"},
		{"drwxr-xr-x", NetworkDir},
		{"-rw-------", NetworkDir + "/eth0.nmconnection"},
	}
	if len(listing) != len(want) {
		t.Fatalf("cpio -itv lists %q", listing)
	}
	for i, line := range listing {
		fields := strings.Fields(line)
		if fields[0] != want[i].mode || fields[len(fields)-1] != want[i].name {
			t.Errorf("cpio -itv line %d: %q, want %s %s", i, line, want[i].mode, want[i].name)
		}
	}

	config := run(t, "", archive, "cpio", "-i", "--to-stdout", "--quiet", IgnitionPath)
	if !bytes.Equal(config, files[IgnitionPath]) {
		t.Errorf("cpio -i --to-stdout config.ign: %q", config)
	}
}

// Archives made by GNU cpio and compressed by the usual tools are read back, concatenated.
func TestReadArchivesFromTools(t *testing.T) {
	dir := t.TempDir()
	names := []string{"etc", "etc/hostname", "usr", "usr/lib", "usr/lib/os-release", "empty"}
	for _, n := range []string{"etc", "usr/lib"} {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := filesOf("etc/hostname", "sno\n", "usr/lib/os-release", "ID=rhcos\n", "empty", "")
	for p, data := range files {
		if err := os.WriteFile(filepath.Join(dir, p), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	archive := run(t, dir, []byte(strings.Join(names, "\n")+"\n"), "cpio", "-o", "-H", "newc", "--quiet")

	for _, tc := range []struct {
		tool string
		args []string
	}{
		{"gzip", []string{"-c"}},
		{"xz", []string{"-c", "--check=crc64"}},
		{"xz", []string{"-c", "--check=crc32", "-9"}},
		{"zstd", []string{"-c", "-q"}},
	} {
		compressed := run(t, "", archive, tc.tool, tc.args...)
		// GNU cpio pads its output to 512-byte blocks, so zeros already follow the trailer.
		input := concat(archive, compressed, compressed, archive)
		got, err := Read(bytes.NewReader(input), ReadOptions{})
		if err != nil {
			t.Fatalf("%s %s: %v", tc.tool, strings.Join(tc.args, " "), err)
		}
		if diff := equalFiles(got, files); diff != "" {
			t.Errorf("%s %s: %s", tc.tool, strings.Join(tc.args, " "), diff)
		}
	}
}
