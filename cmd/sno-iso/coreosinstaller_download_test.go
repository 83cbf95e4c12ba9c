package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/stream-metadata-go/stream"
	"github.com/ulikunitz/xz"
)

// TestDropInDownload: coreos-installer's download command lines work through the drop-in
// against a stream served on loopback at --stream-base-url: its defaults (stream stable,
// format raw.xz, directory .), -f, -a, -C, -d (the image decompressed), --fetch-retries and
// --insecure; each prints the path written as coreos-installer does, the bytes are the
// stream's (sha256-checked), a second run keeps the file, and what sno-iso cannot do (-u
// without a digest, another platform) is a usage error naming what to run.
func TestDropInDownload(t *testing.T) {
	raw := randomBytes(1<<20, 9)
	var compressed bytes.Buffer
	w, err := xz.NewWriter(&compressed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(raw); err != nil || w.Close() != nil {
		t.Fatal("xz:", err)
	}
	iso := randomBytes(2<<20, 10)
	files := map[string][]byte{"/fcos-metal.x86_64.raw.xz": compressed.Bytes(), "/fcos-live.x86_64.iso": iso}
	server := newArtifactServer(t, 20, files)
	art := func(name string) *stream.Artifact {
		return &stream.Artifact{Location: server.URL + "/" + name, Sha256: bytesSHA(files["/"+name])}
	}
	s := stream.Stream{Stream: "stable", Architectures: map[string]stream.Arch{
		"x86_64": {Artifacts: map[string]stream.PlatformArtifacts{"metal": {Release: "41.20250101.3.0", Formats: map[string]stream.ImageFormat{
			"raw.xz": {Disk: art("fcos-metal.x86_64.raw.xz")}, "iso": {Disk: art("fcos-live.x86_64.iso")},
		}}}},
	}}
	meta, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	files["/streams/stable.json"] = meta
	ci, work, cache := dropInBinary(t), t.TempDir(), t.TempDir()
	base := []string{"download", "--stream-base-url", server.URL + "/streams/", "-a", "x86_64", "--cache-dir", cache}
	for _, c := range []struct {
		args []string
		path string
		want []byte
	}{
		{nil, "./fcos-metal.x86_64.raw.xz", compressed.Bytes()},
		{[]string{"-s", "stable", "-f", "raw.xz", "--insecure"}, "./fcos-metal.x86_64.raw.xz", compressed.Bytes()}, // kept: same bytes
		{[]string{"-f", "iso", "-C", "out", "--fetch-retries", "infinite"}, "out/fcos-live.x86_64.iso", iso},
		{[]string{"-d", "-p", "metal"}, "./fcos-metal.x86_64.raw", raw},
	} {
		r := runBinary(t, ci, work, nil, append(base, c.args...)...)
		if r.code != 0 {
			t.Fatalf("coreos-installer download %v: exit %d: %s", c.args, r.code, r.stderr)
		}
		if string(r.stdout) != c.path+"\n" {
			t.Errorf("coreos-installer download %v: stdout %q, want %q", c.args, r.stdout, c.path)
		}
		got, err := os.ReadFile(filepath.Join(work, c.path))
		if err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("coreos-installer download %v: %s holds %d bytes (%v), not the stream's", c.args, c.path, len(got), err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-u", server.URL + "/fcos-live.x86_64.iso"}, "sno-iso download --url"},
		{[]string{"-p", "aws"}, "only metal images"},
		{[]string{"-f", "qcow2.xz"}, `no metal format "qcow2.xz"`},
	} {
		r := runBinary(t, ci, work, nil, append(base, c.args...)...)
		if r.code == 0 || !strings.Contains(string(r.stderr), c.want) {
			t.Errorf("coreos-installer download %v: exit %d, stderr %q; want an error saying %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
