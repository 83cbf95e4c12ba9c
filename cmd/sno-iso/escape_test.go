package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// craftedKeyfileISO is a live ISO whose embedded keyfile has a name made to forge lines and
// drive the terminal: an escape sequence, then a line break and a line of its own.
func craftedKeyfileISO(t *testing.T) string {
	t.Helper()
	l := openLiveISO(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	evil := initrd.NetworkDir + "/evil\x1b[2J\x1b]0;owned\x07\nForged: line.nmconnection"
	img, err := l.EmbedKeyfiles(initrd.Files{evil: []byte("[connection]\nid=x\n")}, false)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "crafted.iso")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := img.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantNoRawControl fails when text holds an escape character or a line that the crafted
// name forged.
func wantNoRawControl(t *testing.T, what string, text []byte) {
	t.Helper()
	if bytes.ContainsAny(text, "\x1b\x07") {
		t.Errorf("%s holds a raw escape sequence:\n%q", what, text)
	}
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "Forged: line") {
			t.Errorf("%s holds the forged line:\n%s", what, text)
		}
	}
	if !bytes.Contains(text, []byte(`\x1b[2J`)) {
		t.Errorf("%s does not show the name escaped:\n%s", what, text)
	}
}

// Names read from a crafted ISO reach the terminal escaped in inspect and network extract.
func TestCraftedNamesAreEscaped(t *testing.T) {
	iso := craftedKeyfileISO(t)
	wantNoRawControl(t, "inspect", mustSno(t, nil, "inspect", iso))
	extracted := mustSno(t, nil, "network", "extract", iso)
	wantNoRawControl(t, "network extract", extracted)
	if !bytes.Contains(extracted, []byte("[connection]\nid=x\n")) {
		t.Errorf("the keyfile's own bytes are not extracted as they are:\n%s", extracted)
	}
	r := sno(t, nil, "network", "extract", "-C", t.TempDir(), iso)
	if r.code == 0 {
		wantNoRawControl(t, "network extract -C", r.stdout)
	}
}

// A crafted igninfo.json whose file name drives the terminal reaches every command's error
// escaped: the name is escaped where the error is formed, once for all commands.
func TestCraftedIgninfoNameIsEscapedInErrors(t *testing.T) {
	iso := bytes.Clone(fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso")) // shared with other tests
	setIgninfo(t, iso, "{\"file\": \"\\u001b[2J\\u001b]0;owned\\u0007\\nForged: line\"}")
	path := filepath.Join(t.TempDir(), "crafted.iso")
	if err := os.WriteFile(path, iso, 0o600); err != nil {
		t.Fatal(err)
	}
	nodes := t.TempDir()
	out := t.TempDir()
	for _, args := range [][]string{
		{"inspect", path},
		{"ignition", "show", path},
		{"kargs", "show", path},
		{"reset", "-o", filepath.Join(out, "r.iso"), path},
		{"network", "extract", "-C", filepath.Join(out, "nx"), path},
		{"minimal", path, filepath.Join(out, "m.iso")},
		{"serve", "--iso", path, "--nodes", nodes, "--listen", "127.0.0.1:0"},
	} {
		r := sno(t, nil, args...)
		if r.code == 0 {
			t.Errorf("%s: exit 0", args[0])
			continue
		}
		wantNoRawControl(t, strings.Join(args[:2], " "), r.stderr)
	}
}
