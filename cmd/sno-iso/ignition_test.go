package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

const smallConfig = `{"ignition": {"version": "3.0.0"}}` + "\n"

// TestIgnitionEmbedShowRemove is coreos-installer's iso-ignition behaviour on every fixture:
// the three output modes agree, show returns the exact bytes, re-embedding needs -f, and
// remove restores the pristine bytes.
func TestIgnitionEmbedShowRemove(t *testing.T) {
	for _, name := range fixtures.CoreOSISOs {
		t.Run(name, func(t *testing.T) {
			iso := fixtures.File(t, name)
			pristine := fileSHA(t, iso)
			cfgFile := filepath.Join(t.TempDir(), "config.ign")
			os.WriteFile(cfgFile, []byte(smallConfig), 0o644)

			sums := outputModes(t, iso, nil, "ignition", "embed", "-i", cfgFile)
			if sums[0] != sums[1] || sums[1] != sums[2] {
				t.Fatalf("stdout, -o file and in place differ: %v", sums)
			}
			if sums[0] == pristine {
				t.Fatal("embedding left the ISO unchanged")
			}
			if fileSHA(t, iso) != pristine {
				t.Fatal("the input ISO was modified by -o")
			}

			embedded := filepath.Join(t.TempDir(), "embedded.iso")
			mustSno(t, []byte(smallConfig), "ignition", "embed", "-o", embedded, iso) // from stdin
			if fileSHA(t, embedded) != sums[0] {
				t.Fatal("-i FILE and standard input give different bytes")
			}
			if got := mustSno(t, nil, "ignition", "show", embedded); string(got) != smallConfig {
				t.Fatalf("show = %q, want %q", got, smallConfig)
			}

			before := fileSHA(t, embedded)
			dir := filepath.Dir(embedded)
			wantFailure(t, sno(t, nil, "ignition", "embed", "-i", cfgFile, embedded), "already has an embedded Ignition config", "-f")
			wantFailure(t, sno(t, nil, "ignition", "embed", "-i", cfgFile, "-o", "-", embedded), "already has an embedded Ignition config")
			wantFailure(t, sno(t, nil, "ignition", "embed", "-i", cfgFile, "-o", filepath.Join(dir, "x.iso"), embedded), "already has an embedded Ignition config")
			if fileSHA(t, embedded) != before {
				t.Fatal("a refused embed changed the ISO")
			}
			other := `{"ignition": {"version": "3.2.0"}}`
			os.WriteFile(cfgFile, []byte(other), 0o644)
			mustSno(t, nil, "ignition", "embed", "-fi", cfgFile, embedded)
			if got := mustSno(t, nil, "ignition", "show", embedded); string(got) != other {
				t.Fatalf("after -f, show = %q", got)
			}

			removed := outputModes(t, embedded, nil, "ignition", "remove")
			for _, s := range removed {
				if s != pristine {
					t.Fatalf("remove did not restore the pristine bytes: %v vs %s", removed, pristine)
				}
			}
			wantFailure(t, sno(t, nil, "ignition", "show", iso), "no embedded Ignition config")
		})
	}
}

// TestEmbeddedAreaIsStandardXZ checks that standard tools read what sno-iso embeds: the area
// is an xz stream (CRC32) followed by zeros that xzcat accepts, holding a newc archive.
func TestEmbeddedAreaIsStandardXZ(t *testing.T) {
	for _, tool := range []string{"xz", "cpio"} {
		testenv.Tool(t, tool, map[string]string{"cpio": "cpio", "xz": "xz-utils"}[tool])
	}
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	mustSno(t, []byte(smallConfig), "ignition", "embed", iso)
	var info node.Report
	if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", iso), &info); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(iso)
	area := b[info.Ignition.Offset : info.Ignition.Offset+info.Ignition.Length]
	if !bytes.Equal(area[6:8], []byte{0, 1}) {
		t.Fatalf("xz stream flags %x, want 0001 (CRC32, the only check the kernel accepts)", area[6:8])
	}
	cmd := exec.Command("sh", "-c", "xz -dc | cpio -i --quiet --to-stdout config.ign")
	cmd.Stdin = bytes.NewReader(area)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xz | cpio failed: %v", err)
	}
	if string(out) != smallConfig {
		t.Fatalf("cpio extracted %q", out)
	}
}

// TestNetworkKeyfilesSurviveIgnitionEdits: other members of the area are kept by embed and
// remove, and the area returns to zeros only once it is empty.
func TestNetworkKeyfilesSurviveIgnitionEdits(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	pristine := fileSHA(t, iso)
	keyfile := []byte("[connection]\nid=eth0\n")
	withKeyfile(t, iso, initrd.Files{initrd.NetworkDir + "/eth0.nmconnection": keyfile})

	wantFailure(t, sno(t, nil, "ignition", "show", iso), "no embedded Ignition config")
	mustSno(t, []byte(smallConfig), "ignition", "embed", iso)
	files := payload(t, iso)
	if !bytes.Equal(files[initrd.NetworkDir+"/eth0.nmconnection"], keyfile) || string(files[initrd.IgnitionPath]) != smallConfig {
		t.Fatalf("after embed the area holds %v", files.Paths())
	}
	mustSno(t, []byte(smallConfig), "ignition", "embed", "-f", iso)
	mustSno(t, nil, "ignition", "remove", iso)
	files = payload(t, iso)
	if len(files) != 1 || !bytes.Equal(files[initrd.NetworkDir+"/eth0.nmconnection"], keyfile) {
		t.Fatalf("after remove the area holds %v", files.Paths())
	}
	if fileSHA(t, iso) == pristine {
		t.Fatal("remove dropped the keyfile")
	}
}

func withKeyfile(t *testing.T, path string, files initrd.Files) {
	t.Helper()
	l := openLiveISO(t, path)
	patch, err := l.PayloadPatch(files)
	if err != nil {
		t.Fatal(err)
	}
	img, err := l.Image(patch)
	if err != nil {
		t.Fatal(err)
	}
	if err := isobuilder.WriteInPlace(t.Context(), img, path); err != nil {
		t.Fatal(err)
	}
}

func payload(t *testing.T, path string) initrd.Files {
	t.Helper()
	l := openLiveISO(t, path)
	files, err := l.Payload()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestEmbedWithoutKargsMagic: with the legacy coreKarg magic clobbered, Ignition edits still
// work (the Ignition area does not depend on it).
func TestEmbedWithoutKargsMagic(t *testing.T) {
	for _, name := range []string{"embed-areas-2021-01.iso", "embed-areas-2021-12.iso"} {
		iso := fixtures.File(t, name)
		b, _ := os.ReadFile(iso)
		copy(b[32672:32680], make([]byte, 8))
		os.WriteFile(iso, b, 0o644)
		pristine := fileSHA(t, iso)
		mustSno(t, []byte(smallConfig), "ignition", "embed", iso)
		if got := mustSno(t, nil, "ignition", "show", iso); string(got) != smallConfig {
			t.Fatalf("%s: show = %q", name, got)
		}
		mustSno(t, nil, "ignition", "remove", iso)
		if fileSHA(t, iso) != pristine {
			t.Fatalf("%s: remove did not restore the bytes", name)
		}
	}
}

// TestTooLargePayload: a config whose compressed size exceeds the area fails in every output
// mode, names both sizes, and writes nothing.
func TestTooLargePayload(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	pristine := fileSHA(t, iso)
	big := incompressibleConfig(480 << 10)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.iso")
	for _, args := range [][]string{{"-o", "-"}, {"-o", out}, {}} {
		r := sno(t, big, append(append([]string{"ignition", "embed"}, args...), iso)...)
		wantFailure(t, r, "too large", "262144")
		if len(r.stdout) != 0 {
			t.Errorf("%v: wrote %d bytes to stdout", args, len(r.stdout))
		}
	}
	if fileSHA(t, iso) != pristine {
		t.Fatal("the input changed")
	}
	if ents := dirEntries(t, dir); len(ents) != 0 {
		t.Fatalf("left behind %v", ents)
	}
}

// incompressibleConfig is a valid Ignition config of about n bytes that xz cannot shrink
// much: base64 of pseudo-random bytes.
func incompressibleConfig(n int) []byte {
	noise := make([]byte, n*3/4)
	rng := rand.NewChaCha8([32]byte{1})
	rng.Read(noise)
	return []byte(`{"ignition": {"version": "3.2.0"}, "storage": {"files": [{"path": "/etc/noise", "contents": {"source": "data:;base64,` +
		base64.StdEncoding.EncodeToString(noise) + `"}}]}}`)
}

// TestEmbedRefusesInvalidIgnition: a config the live system would reject is refused before
// anything is written.
func TestEmbedRefusesInvalidIgnition(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	pristine := fileSHA(t, iso)
	for input, want := range map[string]string{
		`{"ignition": {"version": "3.0.0"}`:  "not a valid Ignition config",
		`{"ignition": {"version": "2.2.0"}}`: "not a valid Ignition config",
		`not json`:                           "not a valid Ignition config",
	} {
		wantFailure(t, sno(t, []byte(input), "ignition", "embed", iso), want)
	}
	if fileSHA(t, iso) != pristine {
		t.Fatal("the input changed")
	}
}
