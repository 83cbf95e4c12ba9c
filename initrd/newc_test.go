package initrd

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestWriteNewcEntryOrder(t *testing.T) {
	files := filesOf("c/a", "4", "a/b/c", "1", "a/b/d/e", "2", "a/bz", "3", "b", "5", "a/b/c2", "6")
	var buf bytes.Buffer
	if err := WriteNewc(&buf, files); err != nil {
		t.Fatal(err)
	}
	entries := parseRawNewc(t, buf.Bytes())
	var names []string
	for _, e := range entries {
		names = append(names, e.name)
	}
	want := []string{"a", "a/b", "a/b/c", "a/b/c2", "a/b/d", "a/b/d/e", "a/bz", "b", "c", "c/a", "TRAILER!!!"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("entries %q, want %q", names, want)
	}
	inodes := map[int64]bool{}
	for _, e := range entries[:len(entries)-1] {
		wantMode := int64(0o100600)
		if _, isFile := files[e.name]; !isFile {
			wantMode = 0o040755
			if len(e.data) != 0 {
				t.Errorf("directory %q has %d bytes of data", e.name, len(e.data))
			}
		} else if !bytes.Equal(e.data, files[e.name]) {
			t.Errorf("%q holds %q, want %q", e.name, e.data, files[e.name])
		}
		if e.mode != wantMode || e.uid != 0 || e.gid != 0 || e.mtime != 0 || e.nlink != 1 || e.check != 0 {
			t.Errorf("%q: mode %o uid %d gid %d mtime %d nlink %d check %d; want mode %o, zeros, nlink 1",
				e.name, e.mode, e.uid, e.gid, e.mtime, e.nlink, e.check, wantMode)
		}
		if inodes[e.ino] {
			t.Errorf("%q reuses inode %d", e.name, e.ino)
		}
		inodes[e.ino] = true
	}
	trailer := entries[len(entries)-1]
	if trailer.nlink != 1 || trailer.mode != 0 || trailer.ino != 0 || len(trailer.data) != 0 {
		t.Errorf("trailer: nlink %d mode %o ino %d size %d; want nlink 1 and zeros", trailer.nlink, trailer.mode, trailer.ino, len(trailer.data))
	}
}

// The reference archive of spec 2.1: config.ign with 34 bytes is 284 bytes long, the data at
// offset 124, the trailer header at 160.
func TestWriteNewcReferenceLayout(t *testing.T) {
	config := "{\"ignition\": {\"version\": \"3.0.0\"}\n"
	var buf bytes.Buffer
	if err := WriteNewc(&buf, Files{IgnitionPath: []byte(config)}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if len(b) != 284 {
		t.Fatalf("archive is %d bytes, want 284", len(b))
	}
	if got := string(b[110:124]); got != "config.ign\x00\x00\x00\x00" {
		t.Errorf("name field %q", got)
	}
	if got := string(b[124 : 124+len(config)]); got != config {
		t.Errorf("data %q", got)
	}
	if got := string(b[160:166]); got != "070701" {
		t.Errorf("trailer magic at 160: %q", got)
	}
	if got := string(b[270:284]); got != "TRAILER!!!\x00\x00\x00\x00" {
		t.Errorf("trailer name %q", got)
	}
}

func TestWriteNewcEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteNewc(&buf, Files{}); err != nil {
		t.Fatal(err)
	}
	entries := parseRawNewc(t, buf.Bytes())
	if len(entries) != 1 || entries[0].name != "TRAILER!!!" {
		t.Fatalf("empty archive has entries %v", entries)
	}
}

func TestWriteNewcRejectsBadPaths(t *testing.T) {
	for _, p := range []string{"", ".", "/abs", "../up", "a/../b", "a/..", "./a", "a//b", "a/", "a/./b", "nul\x00byte"} {
		err := WriteNewc(&bytes.Buffer{}, Files{"ok": nil, p: []byte("x")})
		if err == nil {
			t.Errorf("path %q accepted", p)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", p)) {
			t.Errorf("path %q: error %q does not name it", p, err)
		}
	}
	err := WriteNewc(&bytes.Buffer{}, filesOf("a", "file", "a/b", "under a file"))
	if err == nil || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("a file that is also a parent directory: %v", err)
	}
}
