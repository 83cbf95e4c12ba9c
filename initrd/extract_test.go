package initrd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/umask"
)

func TestExtract(t *testing.T) {
	umask.Permissive(t)
	files, err := Read(bytes.NewReader(fixtures.Bytes(t, "initrd-compressed.img")), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	written, err := Extract(files, dir)
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

func TestExtractRefusesTraversal(t *testing.T) {
	for fixture, path := range map[string]string{
		"initrd-traversal-absolute.img": "/etc/adjtime",
		"initrd-traversal-relative.img": "../f",
	} {
		files, err := Read(bytes.NewReader(fixtures.Bytes(t, fixture)), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		files["a-harmless-file"] = []byte("sorted first, so it would be written first")
		assertRefused(t, files, "path "+path+" contains path traversal")
	}
	for _, path := range []string{"a/../../b", "a/..", "..", "/", "//x", "a/b/../../.."} {
		assertRefused(t, Files{"fine": nil, path: []byte("x")}, "path "+path+" contains path traversal")
	}
	assertRefused(t, Files{"fine": nil, "": []byte("x")}, "names no file")
}

// assertRefused checks that Extract fails with wantErr and writes nothing.
func assertRefused(t *testing.T, files Files, wantErr string) {
	t.Helper()
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	written, err := Extract(files, dir)
	if err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Errorf("Extract(%q): %v, want an error containing %q", files.Paths(), err, wantErr)
	}
	if len(written) != 0 {
		t.Errorf("Extract(%q) wrote %q", files.Paths(), written)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 0 {
		t.Errorf("Extract(%q) created %v in %s", files.Paths(), entries, parent)
	}
}

func TestExtractAllowsDotsInNames(t *testing.T) {
	files := filesOf("a/..b", "1", "..c", "2", "d/e...", "3")
	written, err := Extract(files, t.TempDir())
	if err != nil || len(written) != 3 {
		t.Errorf("names with dots that are not \"..\": %q, %v", written, err)
	}
}

func TestExtractRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "b", "exists")
	if err := os.MkdirAll(filepath.Dir(existing), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(existing, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	written, err := Extract(filesOf("a/new", "new", "b/exists", "replacement"), dir)
	if err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), existing) {
		t.Errorf("overwrite: %v, want an error naming %s", err, existing)
	}
	if len(written) != 0 {
		t.Errorf("wrote %q", written)
	}
	if data, _ := os.ReadFile(existing); string(data) != "keep me" {
		t.Errorf("existing file now holds %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("a/new's directory was created before the check failed: %v", err)
	}
}
