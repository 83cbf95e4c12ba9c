package node

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/bipgen"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/isobuilder"
)

const testDisk = "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"

// The files of a test node directory (nodedir, which imports node, owns the real layout).
const (
	DirIgnition = "bootstrap-in-place-for-live-iso.ign"
	DirConfig   = "sno.yaml"
)

// DirInputs are the inputs of a test node directory: its Ignition and, when present, sno.yaml.
func DirInputs(dir string) Inputs {
	in := Inputs{IgnitionPath: filepath.Join(dir, DirIgnition), ConfigPath: filepath.Join(dir, DirConfig)}
	if _, err := os.Stat(in.ConfigPath); err != nil {
		in.ConfigPath = ""
	}
	return in
}

// writeNodeDir writes a node directory: a generated bootstrap-in-place config and sno.yaml.
func writeNodeDir(t *testing.T, snoYAML string) string {
	t.Helper()
	dir := t.TempDir()
	bip, err := bipgen.Generate(bipgen.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, DirIgnition), bip, 0o600); err != nil {
		t.Fatal(err)
	}
	if snoYAML != "" {
		if err := os.WriteFile(filepath.Join(dir, DirConfig), []byte(snoYAML), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func openFixture(t *testing.T, name string) *isobuilder.LiveISO {
	t.Helper()
	return openISO(t, fixtures.File(t, name))
}

func openISO(t *testing.T, path string) *isobuilder.LiveISO {
	t.Helper()
	iso, err := isobuilder.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iso.Close() })
	return iso
}

// Loading a node directory reports every file it read, which is what a server watches.
func TestLoadReportsFilesRead(t *testing.T) {
	dir := writeNodeDir(t, "coreOSInstallation:\n  installationDisk: "+testDisk+"\nnetwork:\n  keyfiles: [eth0.nmconnection]\n")
	os.WriteFile(filepath.Join(dir, "eth0.nmconnection"), []byte("[connection]\nid=eth0\n"), 0o600)
	n, files, err := Load(DirInputs(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, DirIgnition), filepath.Join(dir, DirConfig), filepath.Join(dir, "eth0.nmconnection")}
	if !slices.Equal(files, want) {
		t.Errorf("files read %q, want %q", files, want)
	}
	if n.Installation.Disk != testDisk || !n.Installation.CopyNetwork {
		t.Errorf("installation %+v: want the disk of sno.yaml and copyNetwork implied by the keyfile", n.Installation)
	}
	if _, ok := n.Payload[initrd.NetworkDir+"/eth0.nmconnection"]; !ok {
		t.Errorf("payload %v lacks the keyfile", n.Payload.Paths())
	}

	// A broken file still reports what was read, so that fixing it is noticed.
	os.WriteFile(filepath.Join(dir, "eth0.nmconnection"), []byte("no section\n"), 0o600)
	if _, files, err := Load(DirInputs(dir)); err == nil || !slices.Equal(files, want) {
		t.Errorf("with a broken keyfile: files %q, error %v", files, err)
	}
}

// Without sno.yaml the directory's config is optional, and overrides still apply.
func TestPrepareWithoutConfig(t *testing.T) {
	dir := writeNodeDir(t, "")
	in := DirInputs(dir)
	if in.ConfigPath != "" {
		t.Fatalf("ConfigPath %q for a directory without sno.yaml", in.ConfigPath)
	}
	in.Overrides.Disk = testDisk
	src, files, err := in.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Errorf("files read %q, want only the Ignition config", files)
	}
	n, err := Prepare(src)
	if err != nil {
		t.Fatal(err)
	}
	info, err := coreos.InspectIgnition(n.Payload[initrd.IgnitionPath])
	if err != nil {
		t.Fatal(err)
	}
	if info.Installation.Disk != testDisk {
		t.Errorf("install-to-disk targets %q, want %q", info.Installation.Disk, testDisk)
	}
}

func TestImageErrors(t *testing.T) {
	n := &Node{Payload: initrd.Files{initrd.IgnitionPath: []byte("{}"), initrd.NetworkDir + "/a.nmconnection": []byte("[connection]\n")}}
	// The 2021-01 ISO predates live-initrd-network.
	if _, err := n.Image(openFixture(t, "embed-areas-2021-01.iso")); !errors.Is(err, isobuilder.ErrNoNetworkSupport) {
		t.Errorf("keyfiles on an ISO without network support: %v", err)
	}
	n = &Node{Payload: initrd.Files{initrd.IgnitionPath: []byte("{}")}, LiveKargs: coreos.LiveKargs{Append: []string{"ip=dhcp"}}}
	if _, err := n.Image(openFixture(t, "embed-areas-2020-09.iso")); !errors.Is(err, ErrNoLiveKargs) {
		t.Errorf("live kargs on an ISO without kargs areas: %v", err)
	}

	iso := openFixture(t, "embed-areas-2023-07.x86_64.iso")
	img, err := (&Node{Payload: initrd.Files{initrd.IgnitionPath: []byte("{}")}}).Image(iso)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "custom.iso")
	if err := isobuilder.WriteFile(context.Background(), img, out, isobuilder.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	customized := openISO(t, out)
	_, err = n.Image(customized)
	var embedded *EmbeddedFilesError
	if !errors.As(err, &embedded) || !errors.Is(err, isobuilder.ErrCustomized) || !slices.Equal(embedded.Paths, []string{initrd.IgnitionPath}) {
		t.Errorf("customizing a customized ISO: %v", err)
	}
	if strings.Contains(err.Error(), "sno-iso") || strings.Contains(err.Error(), "--") {
		t.Errorf("library error %q speaks of the command line", err)
	}
}

// The node's ISO from Media carries its payload and its live kargs, and nothing else changes.
func TestMediaFullISO(t *testing.T) {
	iso := openFixture(t, "embed-areas-2023-07.x86_64.iso")
	n := &Node{Payload: initrd.Files{initrd.IgnitionPath: []byte(`{"ignition":{"version":"3.2.0"}}`)}, LiveKargs: coreos.LiveKargs{Append: []string{"ip=dhcp"}}}
	m, err := n.Media(context.Background(), iso, MediaOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if m.Derived != nil || len(m.Warnings) != 0 {
		t.Errorf("a full ISO made a derived ISO (%v) or warnings %q", m.Derived, m.Warnings)
	}
	out := filepath.Join(t.TempDir(), "node.iso")
	if err := isobuilder.WriteFile(context.Background(), m.Image, out, isobuilder.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	got := openISO(t, out)
	payload, err := got.Payload()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(payload[initrd.IgnitionPath], n.Payload[initrd.IgnitionPath]) {
		t.Errorf("embedded config %q", payload[initrd.IgnitionPath])
	}
	if kargs, _ := got.CurrentKargs(); !strings.HasSuffix(kargs, " ip=dhcp") {
		t.Errorf("live kargs %q lack ip=dhcp", kargs)
	}
}

// A minimal ISO without a way to reach the network at boot is warned about.
func TestMediaMinimalWarnsWithoutNetwork(t *testing.T) {
	iso := openFixture(t, "embed-areas-2023-07.x86_64.iso")
	n := &Node{Payload: initrd.Files{initrd.IgnitionPath: []byte(`{"ignition":{"version":"3.2.0"}}`)}}
	m, err := n.Media(context.Background(), iso, MediaOptions{Minimal: true, TempDir: t.TempDir(),
		MinimalOptions: isobuilder.MinimalOptions{RootfsURL: "http://192.0.2.1/rootfs.img"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Derived.Close()
	if len(m.Warnings) != 1 || m.Warnings[0].Kind != MinimalOverDHCP || !strings.Contains(m.Warnings[0].Text, "DHCP") {
		t.Errorf("warnings %q", m.Warnings)
	}
	n.LiveKargs.Append = []string{"ip=192.0.2.10::192.0.2.1:255.255.255.0::eth0:none"}
	if w := n.MinimalWarnings(m.Derived.LiveISO); len(w) != 0 {
		t.Errorf("with an ip= live karg: warnings %q", w)
	}
}

func TestChooseMinimal(t *testing.T) {
	for name, want := range map[string]MinimalMethod{
		"embed-areas-2023-07.x86_64.iso": FromMiniso,
		// miniso.dat cannot be used without kargs areas to put the rootfs URL in.
		"embed-areas-2020-09.iso": Rebuild,
	} {
		iso := openFixture(t, name)
		if got := ChooseMinimal(iso); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
		r, err := Inspect(iso, name)
		if err != nil {
			t.Fatal(err)
		}
		if r.MinimalISO.Available && r.MinimalISO.Method != string(want) {
			t.Errorf("%s: inspect says %s, the minimal ISO is made by %s", name, r.MinimalISO.Method, want)
		}
	}
}

func TestHasIPKarg(t *testing.T) {
	for kargs, want := range map[string]bool{
		"":                           false,
		"ip=dhcp":                    true,
		"rd.neednet=1 ip=eth0:dhcp":  true,
		"vip=1 nameserver=192.0.2.1": false,
		"  ip=192.0.2.2::::::none  ": true,
	} {
		if got := HasIPKarg(kargs); got != want {
			t.Errorf("HasIPKarg(%q) = %t", kargs, got)
		}
	}
}

// TestGrownAreaHoldsThePayload: for payloads that do not fit the stock area, GrownISO's area
// holds the payload with as much room again (so a config twice as large still embeds, by
// sno-iso or coreos-installer), in whole 256 KiB steps, and is the smallest such size.
func TestGrownAreaHoldsThePayload(t *testing.T) {
	const step = 256 << 10
	iso := openFixture(t, "embed-areas-2023-07.x86_64.iso")
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte { // xz cannot shrink these
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	// Just over the stock 256 KiB: xz under the race detector takes a minute per MiB.
	const n = 300 << 10
	config := random(n)
	_, err := iso.EmbedIgnition(config, false)
	var tooLarge *isobuilder.TooLargeError
	if !errors.As(err, &tooLarge) {
		t.Fatalf("%d random bytes in the stock area: %v, want TooLargeError", n, err)
	}
	grown, err := GrownISO(context.Background(), iso, tooLarge, MediaOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer grown.Close()
	size, payload := grown.IgnitionArea().Length, tooLarge.Compressed
	switch {
	case size%step != 0:
		t.Errorf("payload %d: area of %d bytes, not whole 256 KiB steps", payload, size)
	case size < 2*payload:
		t.Errorf("payload %d: area of %d bytes leaves less room than the payload takes", payload, size)
	case size-step >= 2*payload:
		t.Errorf("payload %d: area of %d bytes, one step less would do", payload, size)
	}
	if _, err := grown.EmbedIgnition(random(2*n), false); err != nil {
		t.Errorf("payload %d: a config twice as large does not embed in the grown area of %d bytes: %v", payload, size, err)
	}
	// The same properties for any payload size.
	for range 10000 {
		payload := 1 + rng.Int64N(64<<20)
		size := GrownAreaSize(payload)
		if size%step != 0 || size < 2*payload || size-step >= 2*payload {
			t.Fatalf("GrownAreaSize(%d) = %d: not the smallest multiple of 256 KiB holding twice the payload", payload, size)
		}
	}
}

// A static live address that the installed node would lose is warned about in sno.yaml's
// terms only: the setting is named, for callers to add their own option beside it.
func TestPrepareWarnsOfLiveOnlyAddress(t *testing.T) {
	dir := writeNodeDir(t, "coreOSInstallation:\n  installationDisk: "+testDisk+"\nliveKargs:\n  append: [ip=dhcp]\n")
	n, _, err := Load(DirInputs(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := Warning{Kind: LiveIPNotCopied, Setting: "copyNetwork: true",
		Text: "live kernel argument ip=dhcp configures the live system only: set copyNetwork: true so that the installed node keeps it after the reboot"}
	if !slices.Equal(n.Warnings, []Warning{want}) {
		t.Errorf("warnings %+v, want %+v", n.Warnings, want)
	}
}

// A sno.yaml rootfs URL that the bootloaders would cut short is refused when the node is
// loaded, naming the file and the setting, as the flag is when build starts.
func TestLoadRefusesRootfsURLTheBootloadersCut(t *testing.T) {
	dir := writeNodeDir(t, "coreOSInstallation:\n  installationDisk: "+testDisk+"\noutput:\n  kind: minimal\n  rootfsURL: \"http://192.0.2.1/a b/rootfs.img\"\n")
	_, _, err := Load(DirInputs(dir))
	cfg := filepath.Join(dir, DirConfig)
	if err == nil || !strings.Contains(err.Error(), cfg) || !strings.Contains(err.Error(), "output.rootfsURL") || !strings.Contains(err.Error(), "whitespace") {
		t.Fatalf("got %v, want the whitespace in %s's output.rootfsURL refused", err, cfg)
	}
}
