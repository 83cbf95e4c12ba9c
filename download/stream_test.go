package download

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/coreos/stream-metadata-go/stream"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

func loadTestStream(t *testing.T) *stream.Stream {
	t.Helper()
	s, err := quickFetcher(nil).LoadStream(testContext(t), "testdata/rhcos-stream.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSelectLiveISO(t *testing.T) {
	got, err := Select(loadTestStream(t), "aarch64", FormatISO)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name() != "rhcos-418.94.202501221327-0-live-iso.aarch64.iso" ||
		got[0].SHA256 != "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9" || got[0].SignatureURL != "" {
		t.Errorf("got %+v", got)
	}
}

func TestSelectPXEIsKernelInitramfsRootfs(t *testing.T) {
	got, err := Select(loadTestStream(t), "aarch64", FormatPXE)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range got {
		names = append(names, a.Name())
	}
	want := []string{"rhcos-418.94.202501221327-0-live-kernel.aarch64", "rhcos-418.94.202501221327-0-live-initramfs.aarch64.img",
		"rhcos-418.94.202501221327-0-live-rootfs.aarch64.img"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("got %q, want %q", names, want)
	}
}

func TestSelectListsWhatTheStreamHas(t *testing.T) {
	s := loadTestStream(t)
	for _, tc := range []struct {
		arch, format string
		want         []string
	}{
		{"s390x", FormatISO, []string{`no architecture "s390x"`, "aarch64, x86_64"}},
		{"x86_64", FormatPXE, []string{`metal format "pxe" for x86_64`, "iso, raw.gz"}},
	} {
		_, err := Select(s, tc.arch, tc.format)
		var missing *NotInStreamError
		if !errors.As(err, &missing) {
			t.Fatalf("%s %s: got %v, want a NotInStreamError", tc.arch, tc.format, err)
		}
		for _, w := range append(tc.want, "rhcos-4.18") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %s: error %q does not say %q", tc.arch, tc.format, err, w)
			}
		}
	}
	if _, err := Select(s, "x86_64", "qcow2"); err == nil || !strings.Contains(err.Error(), "iso, raw.gz") {
		t.Errorf("a format the stream lacks: got %v", err)
	}
	// Other formats are disk images, one file each, as coreos-installer's download takes them.
	raw, err := Select(s, "x86_64", "raw.gz")
	if want := s.Architectures["x86_64"].Artifacts["metal"].Formats["raw.gz"].Disk.Location; err != nil || len(raw) != 1 || raw[0].URL != want {
		t.Errorf("raw.gz: got %v, %v; want the one disk image %s", raw, err, want)
	}
}

func TestSelectRejectsArtifactsThatCannotBeVerified(t *testing.T) {
	s := loadTestStream(t)
	iso := s.Architectures["x86_64"].Artifacts["metal"].Formats["iso"]
	iso.Disk.Sha256 = "not-a-digest"
	if _, err := Select(s, "x86_64", FormatISO); err == nil || !strings.Contains(err.Error(), "not a sha256 digest") {
		t.Errorf("got %v, want the bad digest named", err)
	}
}

func TestLoadStreamMalformed(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"truncated.json": `{"stream":"rhcos-4.18","architectures":{`,
		"empty.json":     `{"stream":"rhcos-4.18"}`,
		"wrongtype.json": `{"stream":"rhcos-4.18","architectures":[1,2]}`,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := quickFetcher(nil).LoadStream(testContext(t), path)
		var bad *StreamError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %v, want a StreamError naming the file", name, err)
		}
	}
	_, err := quickFetcher(nil).LoadStream(testContext(t), filepath.Join(dir, "missing.json"))
	if err == nil || !strings.Contains(err.Error(), "stable, testing, next") {
		t.Errorf("missing file: got %v, want the kinds of source listed", err)
	}
}

// A named pipe given as the stream is refused at once, naming it once, rather than waited
// on in open(2).
func TestLoadStreamRefusesNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "stream.json")
	fixtures.NamedPipe(t, fifo)
	_, err := quickFetcher(nil).LoadStream(testContext(t), fifo)
	var bad *StreamError
	if !errors.As(err, &bad) || !errors.Is(err, input.ErrNotRegular) {
		t.Fatalf("got %v, want a StreamError wrapping input.ErrNotRegular", err)
	}
	if want := "stream " + fifo + ": not a regular file but a named pipe; stream metadata must be a regular file"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
}

func TestLoadStreamByNameAndURL(t *testing.T) {
	raw, err := os.ReadFile("testdata/rhcos-stream.json")
	if err != nil {
		t.Fatal(err)
	}
	o := newOrigin(t, 2, func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/streams/stable.json" && r.URL.Path != "/rhcos-4.18.json" {
			http.NotFound(w, r)
			return
		}
		w.Write(raw)
	})
	f := quickFetcher(nil)
	f.streamBase = o.URL + "/streams/"
	for _, source := range []string{"stable", o.URL + "/rhcos-4.18.json"} {
		s, err := f.LoadStream(testContext(t), source)
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		var want stream.Stream
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*s, want) {
			t.Errorf("%s: stream differs from the served one", source)
		}
	}
}

func TestParseSHA256Sums(t *testing.T) {
	a, b := strings.Repeat("ab", 32), strings.Repeat("CD", 32)
	got, err := ParseSHA256Sums([]byte(a + "  rhcos-live.x86_64.iso\n\n" + b + " *rhcos-live-kernel-x86_64\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"rhcos-live.x86_64.iso": a, "rhcos-live-kernel-x86_64": strings.ToLower(b)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"abc  file\n", a + "\n", a + "  \n", a + "  f\n" + b + "  f\n"} {
		if _, err := ParseSHA256Sums([]byte(bad)); err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("%q: got %v, want an error naming the line", bad, err)
		}
	}
}

func TestArtifactName(t *testing.T) {
	for u, want := range map[string]string{
		"https://mirror.example/pub/rhcos-live.x86_64.iso?token=1#x": "rhcos-live.x86_64.iso",
		"https://mirror.example/pub/":                                "",
		"https://mirror.example":                                     "",
		"https://mirror.example/a%20b.iso":                           "a b.iso",
	} {
		if got := (Artifact{URL: u}).Name(); got != want {
			t.Errorf("%s: name %q, want %q", u, got, want)
		}
	}
	for _, u := range []string{"https://mirror.example/", "https://mirror.example/.lock", "ftp://mirror.example/a.iso", "https://mirror.example/x%5C..%5C..%5Cy.iso"} {
		if err := (Artifact{URL: u, SHA256: strings.Repeat("0", 64)}).check(); err == nil {
			t.Errorf("%s: accepted", u)
		}
	}
}

// A stream read from a pipe, as the shell's <(openshift-install coreos print-stream-json)
// passes it, or from standard input.
func TestLoadStreamFromAPipe(t *testing.T) {
	raw, err := os.ReadFile("testdata/rhcos-stream.json")
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.Write(raw)
		w.Close()
	}()
	path := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if _, err := os.Stat(path); err != nil {
		testenv.Missing(t, "no %s here: %v", path, err)
	}
	s, err := quickFetcher(nil).LoadStream(testContext(t), path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Stream != "rhcos-4.18" {
		t.Errorf("stream %q", s.Stream)
	}
	if _, err := ReadStream(io.MultiReader(bytes.NewReader(raw), strings.NewReader(strings.Repeat(" ", maxStreamSize)))); err == nil ||
		!strings.Contains(err.Error(), "too large") {
		t.Errorf("oversized stream: got %v", err)
	}
}
