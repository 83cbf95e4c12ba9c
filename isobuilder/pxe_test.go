package isobuilder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/fixtures"
)

func openLiveFixture(t *testing.T, name string) *LiveISO {
	t.Helper()
	iso, err := Open(fixtures.File(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { iso.Close() })
	return iso
}

// The fixtures' PXE files hold a few recognisable bytes in place of the real kernel,
// initramfs and rootfs (the s390x kernel.img is a real boot record image).
func TestPXEFilesFixtures(t *testing.T) {
	tests := []struct {
		fixture string
		want    map[string]string // name -> content prefix
	}{
		{"embed-areas-2021-12.iso", map[string]string{"vmlinuz": "the kernel", "initrd.img": "initrd data", "rootfs.img": "rootfs data"}},
		{"embed-areas-2023-07.x86_64.iso", map[string]string{"vmlinuz": "the kernel\n", "initrd.img": "initrd data\n", "rootfs.img": "rootfs data\n"}},
		{"embed-areas-2023-07.s390x.iso", map[string]string{"vmlinuz": "the kernel\n", "initrd.img": "initrd data\n", "rootfs.img": "rootfs data\n", "kernel.img": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			iso := openLiveFixture(t, tt.fixture)
			files, err := iso.PXEFiles()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range files {
				names = append(names, f.Name)
				data, err := io.ReadAll(iso.PXEFileReader(f))
				if err != nil {
					t.Fatal(err)
				}
				if len(data) != int(f.Length) || !strings.HasPrefix(string(data), tt.want[f.Name]) {
					t.Errorf("%s: %d bytes %.20q, want %d bytes starting %q", f.Name, len(data), data, f.Length, tt.want[f.Name])
				}
				if tt.want[f.Name] != "" && string(data) != tt.want[f.Name] {
					t.Errorf("%s = %q, want %q", f.Name, data, tt.want[f.Name])
				}
			}
			slices.Sort(names)
			var want []string
			for n := range tt.want {
				want = append(want, n)
			}
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Errorf("PXE files %q, want %q", names, want)
			}
			if _, err := iso.PXEFile("initrd.img"); err != nil {
				t.Error(err)
			}
			if _, err := iso.PXEFile("missing.img"); err == nil || !strings.Contains(err.Error(), "IMAGES/PXEBOOT/MISSING.IMG") {
				t.Errorf("PXEFile(missing.img) = %v, want an error naming the path", err)
			}
		})
	}
}

func TestExtractPXE(t *testing.T) {
	iso := openLiveFixture(t, "embed-areas-2023-07.s390x.iso")
	files, err := iso.PXEFiles()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	written, err := iso.ExtractPXE(context.Background(), dir, "fcos-")
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != len(files) {
		t.Fatalf("wrote %q for %d files", written, len(files))
	}
	for i, f := range files {
		want, _ := io.ReadAll(iso.PXEFileReader(f))
		path := filepath.Join(dir, "fcos-"+f.Name)
		if written[i] != path {
			t.Errorf("written[%d] = %s, want %s", i, written[i], path)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes (err %v), want the %d bytes of %s", path, len(got), err, len(want), f.Name)
		}
	}

	// One existing destination: nothing is written, nothing is replaced.
	other := t.TempDir()
	keep := filepath.Join(other, "fcos-rootfs.img")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = iso.ExtractPXE(context.Background(), other, "fcos-")
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), keep) {
		t.Fatalf("extract over an existing file: %v, want fs.ErrExist naming %s", err, keep)
	}
	if ents, _ := os.ReadDir(other); len(ents) != 1 {
		t.Errorf("extract over an existing file left %d entries, want only the existing file", len(ents))
	}
	if b, _ := os.ReadFile(keep); string(b) != "mine" {
		t.Errorf("existing file changed to %q", b)
	}
}

func TestExtractPXECancelled(t *testing.T) {
	iso := openLiveFixture(t, "embed-areas-2023-07.x86_64.iso")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	if _, err := iso.ExtractPXE(ctx, dir, ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled extract: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("cancelled extract left %d entries", len(ents))
	}
}

// stockInitramfs is shaped like RHCOS's: an uncompressed early archive, then the main
// archive compressed, holding the stamp and features.json.
func stockInitramfs(t testing.TB, features string) []byte {
	t.Helper()
	var early bytes.Buffer
	if err := initrd.WriteNewc(&early, initrd.Files{"kernel/x86/microcode/GenuineIntel.bin": []byte("ucode")}); err != nil {
		t.Fatal(err)
	}
	main := initrd.Files{LiveInitramfsStamp: nil, "init": []byte("#!/bin/sh\n")}
	if features != "" {
		main[initramfsFeaturesPath] = []byte(features)
	}
	packed, err := initrd.Pack(main)
	if err != nil {
		t.Fatal(err)
	}
	return append(early.Bytes(), packed...)
}

func mustPack(t testing.TB, files initrd.Files) []byte {
	t.Helper()
	b, err := initrd.Pack(files)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawNewc is an uncompressed newc archive of one regular file stored under name as given,
// which initrd.WriteNewc would refuse to write.
func rawNewc(name, data string) []byte {
	var b bytes.Buffer
	entry := func(name, data string, mode int) {
		fmt.Fprintf(&b, "070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x", 0, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
		b.WriteString(name + "\x00")
		b.Write(make([]byte, (4-b.Len()%4)%4))
		b.WriteString(data)
		b.Write(make([]byte, (4-b.Len()%4)%4))
	}
	entry(name, data, 0o100644)
	entry("TRAILER!!!", "", 0)
	return b.Bytes()
}

func TestCustomizeInitramfs(t *testing.T) {
	stock := stockInitramfs(t, `{"live-initrd-network": true}`)
	payload := initrd.Files{
		initrd.IgnitionPath:                      []byte(`{"ignition":{"version":"3.2.0"}}`),
		initrd.NetworkDir + "/eno1.nmconnection": []byte("[connection]\nid=eno1\n"),
	}
	var out bytes.Buffer
	// The keyfile is accepted because features.json of the initramfs says live-initrd-network.
	if err := CustomizeInitramfs(&out, bytes.NewReader(stock), payload); err != nil {
		t.Fatal(err)
	}
	got := out.Bytes()
	if !bytes.HasPrefix(got, stock) {
		t.Fatal("the output does not start with the stock initramfs")
	}
	if !bytes.HasPrefix(got[len(stock):], []byte("\xfd7zXZ\x00")) {
		t.Fatalf("the bytes after the stock initramfs are % x, want the xz magic", got[len(stock):len(stock)+6])
	}
	files, err := initrd.Read(bytes.NewReader(got), initrd.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range payload {
		if !bytes.Equal(files[p], want) {
			t.Errorf("%s = %q, want %q", p, files[p], want)
		}
	}
	if _, ok := files[LiveInitramfsStamp]; !ok {
		t.Error("the stock files are gone")
	}
}

func TestCustomizeInitramfsRefuses(t *testing.T) {
	stock := stockInitramfs(t, "")
	config := initrd.Files{initrd.IgnitionPath: []byte("{}")}
	tests := []struct {
		name    string
		input   []byte
		files   initrd.Files
		wantErr error
		want    string
	}{
		// coreos-installer's test: an initrd made by `pxe ignition wrap -i /dev/null`.
		{"wrapped empty config", mustPack(t, initrd.Files{initrd.IgnitionPath: nil}), config, ErrNotLiveInitramfs, LiveInitramfsStamp},
		{"not an archive", []byte("initrd data\n"), config, ErrNotLiveInitramfs, "unrecognized data at byte offset 0"},
		{"empty", nil, config, ErrNotLiveInitramfs, LiveInitramfsStamp},
		{"truncated", stock[:len(stock)-10], config, ErrNotLiveInitramfs, "truncated"},
		{"already has config.ign", append(slices.Clone(stock), mustPack(t, config)...), config, ErrInitramfsCustomized, "config.ign"},
		{"config.ign stored as ./config.ign", append(slices.Clone(stock), rawNewc("./config.ign", "{}")...), config, ErrInitramfsCustomized, "config.ign"},
		{"already has a keyfile", append(slices.Clone(stock), mustPack(t, initrd.Files{initrd.NetworkDir + "/a.nmconnection": []byte("x")})...), config, ErrInitramfsCustomized, initrd.NetworkDir + "/a.nmconnection"},
		{"keyfiles without the feature", stock, initrd.Files{initrd.NetworkDir + "/a.nmconnection": []byte("x")}, nil, "live-initrd-network"},
		{"bad features.json", stockInitramfs(t, "{"), config, nil, "etc/coreos/features.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CustomizeInitramfs(io.Discard, bytes.NewReader(tt.input), tt.files)
			if err == nil {
				t.Fatal("accepted")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v is not %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}
