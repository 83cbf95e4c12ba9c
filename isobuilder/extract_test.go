package isobuilder

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/umask"
)

func TestExtractFiles(t *testing.T) {
	umask.Permissive(t)
	files, err := initrd.Read(bytes.NewReader(fixtures.Bytes(t, "initrd-compressed.img")), initrd.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	written, err := ExtractFiles(files, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != len(files) {
		t.Fatalf("wrote %q for %d files", written, len(files))
	}
	for i, p := range files.Paths() {
		if want := filepath.Join(dir, p); written[i] != want {
			t.Errorf("written[%d] = %q, want %q", i, written[i], want)
		}
		data, err := os.ReadFile(written[i])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, files[p]) {
			t.Errorf("%s holds %q, want %q", written[i], data, files[p])
		}
		info, err := os.Stat(written[i])
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s has mode %v, want 0600 whatever the umask", written[i], perm)
		}
	}
}

func TestExtractFilesRefusesTraversal(t *testing.T) {
	for fixture, path := range map[string]string{
		"initrd-traversal-absolute.img": "/etc/adjtime",
		"initrd-traversal-relative.img": "../f",
	} {
		files, err := initrd.Read(bytes.NewReader(fixtures.Bytes(t, fixture)), initrd.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		files["a-harmless-file"] = []byte("sorted first, so it would be written first")
		assertExtractRefused(t, files, func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "path "+path+" contains path traversal")
		})
	}
}

// A keyfile named through a subdirectory that is a symbolic link would be written wherever
// the link points: refused, with nothing written on either side.
func TestExtractFilesRefusesLinkedSubdirectory(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	written, err := ExtractFiles(initrd.Files{"a": []byte("1"), "sub/b": []byte("2")}, dir)
	if !errors.Is(err, ErrOutsideOutputDir) || written != nil {
		t.Fatalf("ExtractFiles through a linked subdirectory = %q, %v; want ErrOutsideOutputDir", written, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the link's target now holds %v", entries)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%s now holds %v, want only the link", dir, entries)
	}
}

func TestExtractFilesRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "b", "exists")
	if err := os.MkdirAll(filepath.Dir(existing), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(existing, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	written, err := ExtractFiles(initrd.Files{"a/new": []byte("new"), "b/exists": []byte("replacement")}, dir)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), existing) || !strings.Contains(err.Error(), "File exists") {
		t.Errorf("overwrite: %v, want coreos-installer's File exists naming %s", err, existing)
	}
	if len(written) != 0 {
		t.Errorf("wrote %q", written)
	}
	if data, _ := os.ReadFile(existing); string(data) != "keep me" {
		t.Errorf("existing file now holds %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("a/new's directory is left behind: %v", err)
	}
}

// assertExtractRefused checks that ExtractFiles fails as wanted and creates nothing.
func assertExtractRefused(t *testing.T, files initrd.Files, wanted func(error) bool) {
	t.Helper()
	parent := t.TempDir()
	written, err := ExtractFiles(files, filepath.Join(parent, "out"))
	if !wanted(err) || written != nil {
		t.Errorf("ExtractFiles(%q) = %q, %v", files.Paths(), written, err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("ExtractFiles(%q) created %v in %s", files.Paths(), entries, parent)
	}
}
