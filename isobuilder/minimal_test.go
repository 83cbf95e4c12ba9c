package isobuilder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// minimalGoldens are the SHA-256 of `coreos-installer iso extract minimal-iso` output that
// section 8 of the spec computed independently, without and with
// --rootfs-url https://example.com/rootfs.
var minimalGoldens = []struct {
	iso, plain, withURL string
}{
	{"embed-areas-2021-12.iso",
		"6158ad215448979f51c49e418efe02c04020467adeb99530b33b17c967f5cc43",
		"2c58aa8c76cdcb3361eac9766f5be72a1139c8d909475535ed4c2c89618c7923"},
	{"embed-areas-2023-07.x86_64.iso",
		"544c32c296a618d6eb2f6ff228abc2dbc2beb41bded341dcc43812b739e0538b",
		"ff74a08a251b1cd2a7923772b04bfed5be73e9b38de935a31873e7b0457d54d5"},
	{"embed-areas-2023-07.s390x.iso",
		"53413c1ecec58c97a07f214d476cb7cec9c70da964c749f72d6133c59005e2cf",
		"89745926e046a76d8b94fe7a74c2e3a7e3a4f2da9a6129f0d951b9a7c802f631"},
}

// writeMinimal makes the minimal ISO of the fixture at path and returns the written file.
func writeMinimal(t *testing.T, path string, opts MinimalOptions) string {
	t.Helper()
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	d, err := l.MinimalFromMiniso(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return commitDerived(t, d, filepath.Join(dir, "minimal.iso"))
}

// commitDerived writes a derived ISO, as it stands, to out and closes it.
func commitDerived(t *testing.T, d *DerivedISO, out string) string {
	t.Helper()
	defer d.Close()
	img, err := d.Image()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(context.Background(), img, out, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256Hex(b)
}

func TestMinimalFromMinisoGoldens(t *testing.T) {
	const url = "https://example.com/rootfs"
	for _, g := range minimalGoldens {
		t.Run(g.iso, func(t *testing.T) {
			src := fixtures.File(t, g.iso)
			for _, tc := range []struct {
				url, digest, kargs string
			}{
				{"", g.plain, ""},
				{url, g.withURL, " coreos.live.rootfs_url=" + url},
			} {
				out := writeMinimal(t, src, MinimalOptions{RootfsURL: tc.url})
				if got := fileSHA256(t, out); got != tc.digest {
					t.Errorf("--rootfs-url %q: SHA-256 %s, want the spec's candidate golden %s", tc.url, got, tc.digest)
				}
				m, err := Open(out)
				if err != nil {
					t.Fatal(err)
				}
				current, err := m.CurrentKargs()
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(current, "coreos.liveiso") || !strings.HasSuffix(current, tc.kargs) {
					t.Errorf("kargs %q: want no coreos.liveiso and ending %q", current, tc.kargs)
				}
				if strings.Contains(m.kargs.Default, "coreos.liveiso") || strings.Contains(m.kargs.Default, "rootfs_url") {
					t.Errorf("default kargs %q still name the live ISO or the URL", m.kargs.Default)
				}
				for _, p := range []string{rootfsPath, embed.MinisoPath} {
					if _, err := m.volume.Lookup(p); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s in the minimal ISO: %v", p, err)
					}
				}
				m.Close()
			}
		})
	}
}

func TestMinimalFromMinisoKargsJSON(t *testing.T) {
	out := writeMinimal(t, fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), MinimalOptions{})
	m, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rec, err := m.volume.Lookup(kargsJSONPath)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, rec.Length)
	if _, err := m.ReadAt(raw, rec.Offset()); err != nil {
		t.Fatal(err)
	}
	want := `{
  "default": "mitigations=auto,nosmt ignition.firstboot ignition.platform.id=metal",
  "files": [
    {
      "path": "EFI/fedora/grub.cfg",
      "offset": 970,
      "pad": "#",
      "end": "\n"
    },
    {
      "path": "isolinux/isolinux.cfg",
      "offset": 1869,
      "pad": "#",
      "end": "\n"
    }
  ],
  "size": 1139
}`
	if got := strings.TrimRight(string(raw), " "); got != want {
		t.Errorf("kargs.json\n%s\nwant\n%s", got, want)
	}
	if len(raw) != 385 || !strings.HasSuffix(string(raw), " ") {
		t.Errorf("kargs.json is %d bytes, want the original 385 padded with spaces", len(raw))
	}
}

func TestMinimalFromMinisoRefuses(t *testing.T) {
	src := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	l, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		patch func(*testing.T) []Patch
		opts  MinimalOptions
		want  string
	}{
		{"whitespace in URL", nil, MinimalOptions{RootfsURL: "http://a b/"}, "forbidden whitespace found in rootfs URL 'http://a b/'"},
		{"quote in URL", nil, MinimalOptions{RootfsURL: `http://a/"b`}, "percent-encode it"},
		{"embedded Ignition", func(*testing.T) []Patch {
			return []Patch{{Offset: l.ignition.Offset, Data: []byte{1}}}
		}, MinimalOptions{}, "Cannot operate on ISO with embedded customizations"},
		{"edited kargs", func(t *testing.T) []Patch {
			p, err := l.KargsPatches(l.kargs.Default + " foo=bar")
			if err != nil {
				t.Fatal(err)
			}
			return p
		}, MinimalOptions{}, "Cannot operate on ISO with embedded customizations"},
		{"corrupt input", func(*testing.T) []Patch {
			// The sed of iso-extract-minimal-iso.sh: every coreos.liveiso becomes codeos.liveiso,
			// defaults and areas alike, so only the digest can tell.
			var patches []Patch
			raw, _ := os.ReadFile(src)
			for i := 0; ; {
				j := strings.Index(string(raw[i:]), "coreos.liveiso")
				if j < 0 {
					break
				}
				patches = append(patches, Patch{Offset: int64(i + j + 2), Data: []byte("d")})
				i += j + 1
			}
			return patches
		}, MinimalOptions{}, "wrong final digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iso := src
			if tc.patch != nil {
				img, err := l.Image(tc.patch(t)...)
				if err != nil {
					t.Fatal(err)
				}
				iso = filepath.Join(t.TempDir(), "edited.iso")
				if err := WriteFile(ctx, img, iso, WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			e, err := Open(iso)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			dir := t.TempDir()
			d, err := e.MinimalFromMiniso(ctx, dir, tc.opts)
			if err == nil {
				d.Close()
				t.Fatalf("succeeded, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want one containing %q", err, tc.want)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("left %d files behind in the output directory", len(left))
			}
		})
	}
}

func TestMinimalFromMinisoUnsupported(t *testing.T) {
	for _, tc := range []struct{ iso, want string }{
		{"embed-areas-2021-01.iso", "does not support extracting a minimal ISO"},
		{"embed-areas-2020-09.iso", embed.ErrNoKargs.Error()},
	} {
		l, err := Open(fixtures.File(t, tc.iso))
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.MinimalFromMiniso(context.Background(), t.TempDir(), MinimalOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.iso, err, tc.want)
		}
		l.Close()
	}
}

func TestWriteRootfs(t *testing.T) {
	l, err := Open(fixtures.File(t, "embed-areas-2023-07.x86_64.iso"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dest := filepath.Join(t.TempDir(), "rootfs.img")
	stage := NewStage(false)
	if err := l.WriteRootfs(context.Background(), stage, dest); err != nil {
		t.Fatal(err)
	}
	if err := stage.Commit(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dest)
	off, n, _ := l.Locate(rootfsPath)
	want := make([]byte, n)
	l.ReadAt(want, off)
	if string(got) != string(want) || n == 0 {
		t.Errorf("rootfs %q, want %q", got, want)
	}
	if err := l.WriteRootfs(context.Background(), NewStage(false), dest); !errors.Is(err, os.ErrExist) {
		t.Errorf("second write: %v, want an error wrapping fs.ErrExist", err)
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestZeroedMinisoPlaceholderIsNotAMiniso: an ISO whose coreos/miniso.dat was never filled
// (build tools leave it zeroed) goes down the rebuild path instead of failing on the magic.
func TestZeroedMinisoPlaceholderIsNotAMiniso(t *testing.T) {
	path := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const minisoOffset, minisoLength = 417792, 16384 // spec section 8
	copy(b[minisoOffset:minisoOffset+minisoLength], make([]byte, minisoLength))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.hasMiniso {
		t.Fatal("a zeroed miniso.dat placeholder counted as a minimal ISO table")
	}
}
