package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/bipgen"
	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// outputsGolden holds the digest of every run of outputCases, recorded with the binary of
// the tree before the library redesign (SNO_ISO_RECORD_OUTPUTS=1 SNO_ISO_BIN=old binary).
// Re-recorded when issue #13's fixes merged: bipgen's configs gained the service-record
// library, so every input changed; main's binary on the new inputs differed from the merged
// one only where #13 meant to (inspect --json's per-area kargs, build's install-to-disk.sh).
// build-keyfile-without-support re-recorded when its error came to say that the ISO has no
// coreos/features.json rather than that the file lacks live-initrd-network.
const outputsGolden = "testdata/outputs.sha256"

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

// TestOutputsUnchanged runs every command on the fixtures and compares what it wrote
// (stdout, stderr, exit code and every file's bytes) with the digests recorded before the
// library redesign: the redesign changes no command's bytes.
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
		got[c.name] = digestRun(t, dir, r)
	}
	if os.Getenv("SNO_ISO_RECORD_OUTPUTS") != "" {
		var b strings.Builder
		for _, c := range outputCases {
			fmt.Fprintf(&b, "%s %s\n", got[c.name], c.name)
		}
		if err := os.WriteFile(outputsGolden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skipf("recorded %s with %s", outputsGolden, bin)
	}
	want := readOutputsGolden(t)
	for _, c := range outputCases {
		if w, ok := want[c.name]; !ok {
			t.Errorf("%s: no recorded digest", c.name)
		} else if got[c.name] != w {
			t.Errorf("%s (sno-iso %s): output differs from the recorded one", c.name, strings.Join(c.args, " "))
		}
	}
}

// digestRun hashes the exit code, stdout, stderr (with dir written as ".") and the name and
// bytes of every file under dir.
func digestRun(t *testing.T, dir string, r result) string {
	t.Helper()
	h := sha256.New()
	fmt.Fprintf(h, "exit %d\n", r.code)
	fmt.Fprintf(h, "stdout %x\n", sha256.Sum256([]byte(strings.ReplaceAll(string(r.stdout), dir, "."))))
	fmt.Fprintf(h, "stderr %q\n", strings.ReplaceAll(string(r.stderr), dir, "."))
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "file %s %s\n", rel, fileSHA(t, p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func readOutputsGolden(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(outputsGolden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sum, name, ok := strings.Cut(sc.Text(), " "); ok {
			want[name] = sum
		}
	}
	return want
}
