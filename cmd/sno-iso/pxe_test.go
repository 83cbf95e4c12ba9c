package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// The fixtures' PXE files hold these bytes in place of the real kernel, initramfs and rootfs.
var fixturePXE = map[string]string{"vmlinuz": "the kernel\n", "initrd.img": "initrd data\n", "rootfs.img": "rootfs data\n"}

func TestPXEExtract(t *testing.T) {
	for _, tt := range []struct {
		fixture string
		want    []string
	}{
		{"embed-areas-2023-07.x86_64.iso", []string{"initrd.img", "rootfs.img", "vmlinuz"}},
		{"embed-areas-2023-07.s390x.iso", []string{"initrd.img", "kernel.img", "rootfs.img", "vmlinuz"}},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			iso := fixtures.File(t, tt.fixture)
			stem := strings.TrimSuffix(filepath.Base(iso), ".iso")
			dir := filepath.Join(t.TempDir(), "new", "pxe")
			stdout := mustSno(t, nil, "pxe", "extract", "-o", dir, iso)

			var wantNames, wantStdout []string
			for _, n := range tt.want {
				wantNames = append(wantNames, stem+"-"+n)
			}
			got := dirEntries(t, dir)
			if !slices.Equal(got, wantNames) {
				t.Fatalf("extracted %q, want %q", got, wantNames)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(stdout)), "\n") {
				wantStdout = append(wantStdout, filepath.Base(line))
			}
			slices.Sort(wantStdout)
			if !slices.Equal(wantStdout, wantNames) {
				t.Errorf("printed %q, want the paths of %q", stdout, wantNames)
			}
			for _, n := range tt.want {
				want := []byte(fixturePXE[n])
				if n == "kernel.img" {
					want = isoFileBytes(t, iso, "IMAGES/PXEBOOT/KERNEL.IMG")
				}
				if got, _ := os.ReadFile(filepath.Join(dir, stem+"-"+n)); !bytes.Equal(got, want) {
					t.Errorf("%s: %d bytes %.16q, want %d bytes %.16q", n, len(got), got, len(want), want)
				}
			}

			// A second run refuses to overwrite, and changes nothing.
			before := fileSHA(t, filepath.Join(dir, stem+"-vmlinuz"))
			wantFailure(t, sno(t, nil, "pxe", "extract", "-o", dir, iso), "exists")
			if fileSHA(t, filepath.Join(dir, stem+"-vmlinuz")) != before || !slices.Equal(dirEntries(t, dir), wantNames) {
				t.Error("a refused extract changed the directory")
			}
		})
	}
}

func TestPXEExtractDefaultsToWorkingDirectory(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2021-12.iso")
	work := t.TempDir()
	r := snoIn(t, work, nil, "pxe", "extract", iso)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	want := []string{"embed-areas-2021-12-initrd.img", "embed-areas-2021-12-rootfs.img", "embed-areas-2021-12-vmlinuz"}
	if got := dirEntries(t, work); !slices.Equal(got, want) {
		t.Errorf("extracted %q, want %q", got, want)
	}
}

func TestPXEExtractRefusesNonCoreOS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	wantFailure(t, sno(t, nil, "pxe", "extract", "-o", dir, fixtures.File(t, "synthetic.iso")), "unrecognized CoreOS ISO image")
	if _, err := os.Stat(dir); err == nil {
		t.Error("a failed extract left its output directory")
	}
}

// isoFileBytes reads a file of an ISO through the primary directory.
func isoFileBytes(t *testing.T, iso, path string) []byte {
	t.Helper()
	img, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	return isoFileIn(t, img, path)
}

// isoFileIn is the part of the ISO image img that holds the file at path.
func isoFileIn(t *testing.T, img []byte, path string) []byte {
	t.Helper()
	v, err := isobuilder.ReadVolume(bytes.NewReader(img), int64(len(img)))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := v.Lookup(path)
	if err != nil {
		t.Fatal(err)
	}
	return img[rec.Offset() : rec.Offset()+int64(rec.Length)]
}

func TestPXEIgnitionWrapUnwrap(t *testing.T) {
	dir := t.TempDir()
	// Not valid JSON, as in coreos-installer's tests: wrap does not validate.
	config := []byte(`{"ignition": {"version": "3.0.0"}` + "\n")
	in := writeFile(t, filepath.Join(dir, "config.ign"), string(config))

	out := filepath.Join(dir, "config.img")
	mustSno(t, nil, "pxe", "ignition", "wrap", "-i", in, "-o", out)
	wrapped, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(wrapped, []byte("\xfd7zXZ\x00")) {
		t.Errorf("wrap wrote % x, want an xz stream", wrapped[:min(6, len(wrapped))])
	}
	if got := mustSno(t, nil, "pxe", "ignition", "unwrap", out); !bytes.Equal(got, config) {
		t.Errorf("unwrap FILE = %q, want %q", got, config)
	}
	// Standard input and output; the same bytes.
	if got := mustSno(t, config, "pxe", "ignition", "wrap"); !bytes.Equal(got, wrapped) {
		t.Error("wrap to standard output differs from wrap to a file")
	}
	if got := mustSno(t, wrapped, "pxe", "ignition", "unwrap"); !bytes.Equal(got, config) {
		t.Errorf("unwrap of standard input = %q, want %q", got, config)
	}

	// Unlike coreos-installer, an existing output is kept unless --force, and the input
	// always.
	before := fileSHA(t, out)
	wantFailure(t, sno(t, nil, "pxe", "ignition", "wrap", "-i", in, "-o", out), "exists", "--force")
	if fileSHA(t, out) != before {
		t.Fatal("a refused wrap changed its output")
	}
	wantFailure(t, sno(t, nil, "pxe", "ignition", "wrap", "--force", "-i", in, "-o", in), "the output is one of the inputs")
	if got, _ := os.ReadFile(in); !bytes.Equal(got, config) {
		t.Fatal("a wrap over its input changed it")
	}
	other := writeFile(t, filepath.Join(dir, "other.ign"), "{}\n")
	mustSno(t, nil, "pxe", "ignition", "wrap", "--force", "-i", other, "-o", out)
	if got := mustSno(t, nil, "pxe", "ignition", "unwrap", out); string(got) != "{}\n" {
		t.Errorf("after wrap --force, unwrap = %q", got)
	}
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"config.ign", "config.img", "other.ign"}) {
		t.Errorf("the directory holds %q: a temporary file left behind?", got)
	}

	// An empty config is wrapped too (coreos-installer's `wrap -i /dev/null`).
	if got := mustSno(t, nil, "pxe", "ignition", "unwrap", out); len(got) == 0 {
		t.Error("unexpected empty unwrap")
	}
	if got := mustSno(t, mustSno(t, nil, "pxe", "ignition", "wrap", "-i", os.DevNull), "pxe", "ignition", "unwrap"); len(got) != 0 {
		t.Errorf("unwrap of a wrapped empty config = %q", got)
	}
}

func TestPXEIgnitionUnwrapErrors(t *testing.T) {
	noConfig, err := initrd.Pack(initrd.Files{"etc/hostname": []byte("node\n")})
	if err != nil {
		t.Fatal(err)
	}
	wantFailure(t, sno(t, noConfig, "pxe", "ignition", "unwrap"), "couldn't find Ignition config")
	wantFailure(t, sno(t, []byte("initrd data\n"), "pxe", "ignition", "unwrap"), "standard input", "unrecognized data at byte offset 0")
	r := sno(t, nil, "pxe", "ignition", "unwrap", "a", "b")
	wantFailure(t, r, "at most one")
	if r.code != 2 {
		t.Errorf("two arguments: exit %d, want 2", r.code)
	}
}

// What sno-iso wraps, the reference tools read; what they write, sno-iso unwraps.
func TestPXEIgnitionWrapCompatibleWithCpioAndXZ(t *testing.T) {
	for _, tool := range []string{"cpio", "xz"} {
		testenv.Tool(t, tool, map[string]string{"cpio": "cpio", "xz": "xz-utils"}[tool])
	}
	config := []byte(`{"ignition":{"version":"3.2.0"}}`)
	wrapped := mustSno(t, config, "pxe", "ignition", "wrap")
	cmd := exec.Command("bash", "-c", "set -o pipefail; xz -dc | cpio -i --to-stdout --quiet config.ign")
	cmd.Stdin = bytes.NewReader(wrapped)
	got, err := cmd.Output()
	if err != nil || !bytes.Equal(got, config) {
		t.Errorf("xz -dc | cpio -i: %q (%v), want %q", got, err, config)
	}
	if got := mustSno(t, xzNewc(t, "crc32", map[string][]byte{"config.ign": config}), "pxe", "ignition", "unwrap"); !bytes.Equal(got, config) {
		t.Errorf("unwrap of a GNU cpio | xz archive = %q, want %q", got, config)
	}
}

// stockLiveInitramfs is shaped like RHCOS's live initramfs: an uncompressed early archive
// and a compressed main one with the live stamp, small enough for withInitramfs.
func stockLiveInitramfs(t testing.TB) []byte {
	t.Helper()
	return liveInitramfsWithFeatures(t, `{"installer-config": true, "live-initrd-network": true}`)
}

func liveInitramfsWithFeatures(t testing.TB, features string) []byte {
	t.Helper()
	var early bytes.Buffer
	if err := initrd.WriteNewc(&early, initrd.Files{"early_cpio": []byte("1\n")}); err != nil {
		t.Fatal(err)
	}
	main, err := initrd.Pack(initrd.Files{
		isobuilder.LiveInitramfsStamp: nil,
		"etc/coreos/features.json":    []byte(features),
		"init":                        []byte("#!/bin/sh\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return append(early.Bytes(), main...)
}

// withInitramfs returns a copy of the 2023-07 x86_64 fixture whose IMAGES/PXEBOOT/INITRD.IMG
// holds initramfs instead of its 12 placeholder bytes: the file has a sector to itself, so
// the bytes go there and its directory record gets the new length.
func withInitramfs(t *testing.T, initramfs []byte) string {
	t.Helper()
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	img, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	if len(initramfs) > isobuilder.SectorSize {
		t.Fatalf("a %d-byte initramfs does not fit the fixture's sector", len(initramfs))
	}
	v, err := isobuilder.ReadVolume(bytes.NewReader(img), int64(len(img)))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := v.Lookup(isobuilder.PXEDir)
	if err != nil {
		t.Fatal(err)
	}
	file, err := v.Lookup(isobuilder.PXEDir + "/INITRD.IMG")
	if err != nil {
		t.Fatal(err)
	}
	records := img[dir.Offset() : dir.Offset()+int64(dir.Length)]
	patched := false
	for i := 0; i < len(records); {
		n := int(records[i])
		if n == 0 {
			i = (i/isobuilder.SectorSize + 1) * isobuilder.SectorSize
			continue
		}
		rec := records[i : i+n]
		if nameLen := int(rec[32]); string(rec[33:33+nameLen]) == "INITRD.IMG;1" {
			binary.LittleEndian.PutUint32(rec[10:14], uint32(len(initramfs)))
			binary.BigEndian.PutUint32(rec[14:18], uint32(len(initramfs)))
			patched = true
		}
		i += n
	}
	if !patched {
		t.Fatal("no INITRD.IMG;1 record in IMAGES/PXEBOOT")
	}
	sector := img[file.Offset() : file.Offset()+isobuilder.SectorSize]
	clear(sector)
	copy(sector, initramfs)
	if err := os.WriteFile(iso, img, 0o644); err != nil {
		t.Fatal(err)
	}
	return iso
}

func TestPXEBuild(t *testing.T) {
	stock := stockLiveInitramfs(t)
	iso := withInitramfs(t, stock)
	in := t.TempDir()
	ign := bipConfig(t, in, 150000)
	cfg := writeFile(t, filepath.Join(in, "sno.yaml"), "coreOSInstallation:\n  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3\n")
	dir := filepath.Join(t.TempDir(), "sno")
	args := []string{"pxe", "build", "--iso", iso, "--ignition", ign, "--config", cfg, "--base-url", "http://10.0.0.1:8080/sno/", "-o", dir}
	r := sno(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("pxe build: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(string(r.stderr), "chain http://10.0.0.1:8080/sno/boot.ipxe") {
		t.Errorf("pxe build did not say how to boot: %s", r.stderr)
	}
	if got, want := dirEntries(t, dir), []string{"boot.ipxe", "grub.cfg", "initrd.img", "pxelinux.cfg", "rootfs.img", "vmlinuz"}; !slices.Equal(got, want) {
		t.Fatalf("pxe build wrote %q, want %q", got, want)
	}
	if got := dirEntries(t, filepath.Join(dir, "pxelinux.cfg")); !slices.Equal(got, []string{"default"}) {
		t.Errorf("pxelinux.cfg holds %q", got)
	}

	// The initramfs is the stock one, then directly the payload's xz archive, which holds
	// the same prepared config that `build` embeds into the ISO.
	initramfs, err := os.ReadFile(filepath.Join(dir, "initrd.img"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(initramfs, stock) {
		t.Fatal("initrd.img does not start with the stock initramfs")
	}
	if !bytes.HasPrefix(initramfs[len(stock):], []byte("\xfd7zXZ\x00")) {
		t.Errorf("after the stock initramfs: % x, want the xz magic", initramfs[len(stock):len(stock)+6])
	}
	built := filepath.Join(t.TempDir(), "sno.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", built)
	prepared := mustSno(t, nil, "ignition", "show", built)
	if got := mustSno(t, nil, "pxe", "ignition", "unwrap", filepath.Join(dir, "initrd.img")); !bytes.Equal(got, prepared) {
		t.Errorf("unwrap of initrd.img gives %d bytes, not the %d bytes of the config build prepares", len(got), len(prepared))
	}
	if info, err := coreos.InspectIgnition(prepared); err != nil || info.Installation.Disk != "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3" {
		t.Errorf("the prepared config does not install to the configured disk: %+v, %v", info, err)
	}
	for name, want := range map[string]string{"vmlinuz": fixturePXE["vmlinuz"], "rootfs.img": fixturePXE["rootfs.img"]} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}

	// Same inputs, same bytes; an existing directory needs --force.
	sums := map[string]string{}
	for _, name := range pxeBuildFiles {
		sums[name] = fileSHA(t, filepath.Join(dir, name))
	}
	wantFailure(t, sno(t, nil, args...), "exists", "--force")
	mustSno(t, nil, append(args, "--force")...)
	for _, name := range pxeBuildFiles {
		if fileSHA(t, filepath.Join(dir, name)) != sums[name] {
			t.Errorf("%s differs between two runs with the same inputs", name)
		}
	}
	if got := dirEntries(t, dir); len(got) != 6 {
		t.Errorf("after --force the directory holds %q: a temporary directory left behind?", got)
	}
}

// The node's live kargs edit the ISO's, as build edits them in the ISO; its keyfiles go into
// the appended archive, if the initramfs reads them.
func TestPXEBuildLiveKargsAndKeyfiles(t *testing.T) {
	in := t.TempDir()
	ign := bipConfig(t, in, 150000)
	keyfile := writeFile(t, filepath.Join(in, "eno1.nmconnection"), string(bootKeyfile))
	args := []string{"--ignition", ign, "--installation-disk", "/dev/sda", "--network-keyfile", keyfile,
		"--live-karg-delete", "mitigations=auto,nosmt", "--live-karg-append", "ip=192.0.2.10::192.0.2.1:255.255.255.0:sno:eno1:none"}
	dir := t.TempDir()
	mustSno(t, nil, append([]string{"pxe", "build", "--iso", withInitramfs(t, stockLiveInitramfs(t)), "-o", dir}, args...)...)
	want := "kernel vmlinuz initrd=main initrd=rootfs ignition.firstboot ignition.platform.id=metal ip=192.0.2.10::192.0.2.1:255.255.255.0:sno:eno1:none"
	if b, _ := os.ReadFile(filepath.Join(dir, "boot.ipxe")); !slices.Contains(strings.Split(string(b), "\n"), want) {
		t.Errorf("boot.ipxe lacks %q:\n%s", want, b)
	}
	files := readPXEInitrd(t, dir)
	if got := files[initrd.NetworkDir+"/eno1.nmconnection"]; !bytes.Equal(got, bootKeyfile) {
		t.Errorf("the keyfile in initrd.img is %q, want %q", got, bootKeyfile)
	}

	old := withInitramfs(t, liveInitramfsWithFeatures(t, `{"installer-config": true}`))
	out := filepath.Join(t.TempDir(), "out")
	wantFailure(t, sno(t, nil, append([]string{"pxe", "build", "--iso", old, "-o", out}, args...)...), "live-initrd-network")
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused build left its directory")
	}
}

var pxeBuildFiles = []string{"vmlinuz", "initrd.img", "rootfs.img", "boot.ipxe", "pxelinux.cfg/default", "grub.cfg"}

// TestPXEBuildBootConfigs checks the lines each boot loader needs, with and without a base
// URL. The kargs come from the ISO's (2023-07: mitigations=auto,nosmt), without
// coreos.liveiso=, which would make the initramfs wait for the ISO.
func TestPXEBuildBootConfigs(t *testing.T) {
	iso := withInitramfs(t, stockLiveInitramfs(t))
	ign := bipConfig(t, t.TempDir(), 150000)
	kargs := "mitigations=auto,nosmt ignition.firstboot ignition.platform.id=metal"
	tests := []struct {
		name    string
		baseURL string
		want    map[string][]string // file -> lines it must hold
	}{
		{"http base URL", "http://10.0.0.1:8080/sno", map[string][]string{
			"boot.ipxe": {
				"#!ipxe",
				"kernel http://10.0.0.1:8080/sno/vmlinuz initrd=main " + kargs + " coreos.live.rootfs_url=http://10.0.0.1:8080/sno/rootfs.img",
				"initrd --name main http://10.0.0.1:8080/sno/initrd.img",
				"boot",
			},
			"pxelinux.cfg/default": {
				"DEFAULT sno", "LABEL sno",
				"  KERNEL http://10.0.0.1:8080/sno/vmlinuz",
				"  APPEND initrd=http://10.0.0.1:8080/sno/initrd.img " + kargs + " coreos.live.rootfs_url=http://10.0.0.1:8080/sno/rootfs.img",
				"  IPAPPEND 2",
			},
			"grub.cfg": {
				"\tlinux (http,10.0.0.1:8080)/sno/vmlinuz " + kargs + " coreos.live.rootfs_url=http://10.0.0.1:8080/sno/rootfs.img",
				"\tinitrd (http,10.0.0.1:8080)/sno/initrd.img",
			},
		}},
		// Neither PXELINUX nor GRUB speaks https: they load the kernel by TFTP, the live
		// system fetches the rootfs.
		{"https base URL", "https://boot.example.com/sno", map[string][]string{
			"boot.ipxe": {
				"kernel https://boot.example.com/sno/vmlinuz initrd=main " + kargs + " coreos.live.rootfs_url=https://boot.example.com/sno/rootfs.img",
				"initrd --name main https://boot.example.com/sno/initrd.img",
			},
			"pxelinux.cfg/default": {
				"  KERNEL vmlinuz",
				"  APPEND initrd=initrd.img " + kargs + " coreos.live.rootfs_url=https://boot.example.com/sno/rootfs.img",
			},
			"grub.cfg": {
				"\tlinux ${config_directory}/vmlinuz " + kargs + " coreos.live.rootfs_url=https://boot.example.com/sno/rootfs.img",
				"\tinitrd ${config_directory}/initrd.img",
			},
		}},
		{"no base URL: the rootfs is a second initrd", "", map[string][]string{
			"boot.ipxe": {
				"kernel vmlinuz initrd=main initrd=rootfs " + kargs,
				"initrd --name main initrd.img",
				"initrd --name rootfs rootfs.img",
				"boot",
			},
			"pxelinux.cfg/default": {
				"  KERNEL vmlinuz",
				"  APPEND initrd=initrd.img,rootfs.img " + kargs,
				"  IPAPPEND 2",
			},
			"grub.cfg": {
				"\tlinux ${config_directory}/vmlinuz " + kargs,
				"\tinitrd ${config_directory}/initrd.img ${config_directory}/rootfs.img",
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"pxe", "build", "--iso", iso, "--ignition", ign, "--installation-disk", "/dev/sda", "-o", dir}
			if tt.baseURL != "" {
				args = append(args, "--base-url", tt.baseURL)
			}
			mustSno(t, nil, args...)
			for file, lines := range tt.want {
				b, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatal(err)
				}
				have := strings.Split(string(b), "\n")
				for _, line := range lines {
					if !slices.Contains(have, line) {
						t.Errorf("%s lacks the line %q:\n%s", file, line, b)
					}
				}
				if bytes.Contains(b, []byte("coreos.liveiso")) {
					t.Errorf("%s passes coreos.liveiso=:\n%s", file, b)
				}
				if tt.baseURL == "" && bytes.Contains(b, []byte("rootfs_url")) {
					t.Errorf("%s has a rootfs URL without a base URL:\n%s", file, b)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "boot.ipxe")); !bytes.HasPrefix(b, []byte("#!ipxe\n")) {
				t.Errorf("boot.ipxe does not start with #!ipxe: %q", b)
			}
		})
	}
}

func TestPXEBuildErrors(t *testing.T) {
	stock := stockLiveInitramfs(t)
	wrappedEmpty, err := initrd.Pack(initrd.Files{initrd.IgnitionPath: nil})
	if err != nil {
		t.Fatal(err)
	}
	customized, err := initrd.Pack(initrd.Files{initrd.IgnitionPath: []byte("{}")})
	if err != nil {
		t.Fatal(err)
	}
	live := withInitramfs(t, stock)
	ign := bipConfig(t, t.TempDir(), 150000)
	tests := []struct {
		name  string
		iso   string
		extra []string
		code  int
		want  []string
	}{
		{"initrd made by wrap of /dev/null", withInitramfs(t, wrappedEmpty), nil, 1, []string{"not a CoreOS live initramfs", "IMAGES/PXEBOOT/INITRD.IMG"}},
		{"placeholder initrd", fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), nil, 1, []string{"not a CoreOS live initramfs", "unrecognized data"}},
		{"already customized", withInitramfs(t, append(slices.Clone(stock), customized...)), nil, 1, []string{"already customized", "config.ign"}},
		{"not a CoreOS ISO", fixtures.File(t, "synthetic.iso"), nil, 1, []string{"unrecognized CoreOS ISO image"}},
		{"base URL with whitespace", live, []string{"--base-url", "http://10.0.0.1/my dir"}, 2, []string{"--base-url", "whitespace"}},
		{"base URL without scheme", live, []string{"--base-url", "10.0.0.1/sno"}, 2, []string{"--base-url", "http://"}},
		{"base URL with another scheme", live, []string{"--base-url", "tftp://10.0.0.1/sno"}, 2, []string{"--base-url", "http://"}},
		{"base URL without host", live, []string{"--base-url", "http:///sno"}, 2, []string{"--base-url", "no host"}},
		{"bad disk", live, []string{"--installation-disk", "sda"}, 2, []string{"--installation-disk", "sda"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			args := append([]string{"pxe", "build", "--iso", tt.iso, "--ignition", ign, "-o", dir}, tt.extra...)
			if !slices.Contains(tt.extra, "--installation-disk") {
				args = append(args, "--installation-disk", "/dev/sda")
			}
			r := sno(t, nil, args...)
			wantFailure(t, r, tt.want...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d", r.code, tt.code)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("the failed build left %s: %q", dir, dirEntries(t, dir))
			}
		})
	}

	// In an existing directory, a refused build leaves it as it was.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "grub.cfg"), "mine\n")
	wantFailure(t, sno(t, nil, "pxe", "build", "--iso", live, "--ignition", ign, "--installation-disk", "/dev/sda", "-o", dir), "grub.cfg", "exists", "--force")
	wantFailure(t, sno(t, nil, "pxe", "build", "--iso", withInitramfs(t, wrappedEmpty), "--ignition", ign, "--installation-disk", "/dev/sda", "--force", "-o", dir), "not a CoreOS live initramfs")
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"grub.cfg"}) {
		t.Errorf("refused builds left %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "grub.cfg")); string(b) != "mine\n" {
		t.Errorf("a refused build changed grub.cfg to %q", b)
	}
}

// readPXEInitrd reads the members of a pxe build directory's initrd.img.
func readPXEInitrd(t *testing.T, dir string) initrd.Files {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "initrd.img"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files, err := initrd.Read(f, initrd.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
