package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/node"
)

// kargsFixtures are the fixtures with kernel-argument areas: the coreKarg header from
// 2021-01, kargs.json from 2021-12 (coreos-installer's iso-kargs.sh runs from 2021-01).
var kargsFixtures = []string{
	"embed-areas-2021-01.iso",
	"embed-areas-2021-12.iso",
	"embed-areas-2023-07.x86_64.iso",
	"embed-areas-2023-07.s390x.iso",
}

func inspectJSON(t *testing.T, iso string) node.Report {
	t.Helper()
	var info node.Report
	if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", iso), &info); err != nil {
		t.Fatal(err)
	}
	return info
}

func showKargs(t *testing.T, iso string, args ...string) string {
	t.Helper()
	out := string(mustSno(t, nil, append(append([]string{"kargs", "show"}, args...), iso)...))
	if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Fatalf("kargs show printed %q, want one line", out)
	}
	return strings.TrimSuffix(out, "\n")
}

// sameSums fails unless the three output modes gave the same bytes, and returns them.
func sameSums(t *testing.T, sums [3]string) string {
	t.Helper()
	if sums[0] != sums[1] || sums[1] != sums[2] {
		t.Fatalf("stdout, -o file and in place differ: %v", sums)
	}
	return sums[0]
}

// TestKargsModifyShowReset is coreos-installer's iso-kargs.sh on every fixture with karg
// areas: appends show up, deleting them or reset gives the pristine bytes back in every
// output mode, replace works, and the default copy never changes.
func TestKargsModifyShowReset(t *testing.T) {
	for _, name := range kargsFixtures {
		t.Run(name, func(t *testing.T) {
			iso := fixtures.File(t, name)
			pristine := fileSHA(t, iso)
			defaults := showKargs(t, iso, "--default")
			if got := showKargs(t, iso); got != defaults || strings.Contains(got, "foobar") {
				t.Fatalf("pristine kargs %q, defaults %q", got, defaults)
			}

			modified := sameSums(t, outputModes(t, iso, nil, "kargs", "modify", "-a", "foobar=oldval", "-a", "dodo"))
			if fileSHA(t, iso) != pristine {
				t.Fatal("the input ISO was modified by -o")
			}
			dir := t.TempDir()
			m := filepath.Join(dir, "modified.iso")
			mustSno(t, nil, "kargs", "modify", "-a", "foobar=oldval", "-a", "dodo", "-o", m, iso)
			if fileSHA(t, m) != modified {
				t.Fatal("a second run gave different bytes")
			}
			if got := showKargs(t, m); got != defaults+" foobar=oldval dodo" {
				t.Fatalf("after modify: %q", got)
			}
			if got := showKargs(t, m, "-d"); got != defaults {
				t.Fatalf("modify changed the defaults to %q", got)
			}

			for _, s := range outputModes(t, m, nil, "kargs", "modify", "-d", "foobar=oldval", "-d", "dodo") {
				if s != pristine {
					t.Fatal("deleting the appended kargs did not restore the pristine bytes")
				}
			}

			mustSno(t, nil, "kargs", "modify", "-r", "foobar=oldval=newval", m)
			if got := showKargs(t, m); got != defaults+" foobar=newval dodo" {
				t.Fatalf("after replace: %q", got)
			}
			for _, s := range outputModes(t, m, nil, "kargs", "reset") {
				if s != pristine {
					t.Fatal("reset did not restore the pristine bytes")
				}
			}
			mustSno(t, nil, "kargs", "modify", "-d", "foobar=newval", "-d", "dodo", m)
			if fileSHA(t, m) != pristine {
				t.Fatal("deleting the replaced karg did not restore the pristine bytes")
			}
		})
	}
}

// TestKargsCapacity: the longest karg that fits, size − (len(default)+1) − 1 bytes, works;
// one byte more fails in every output mode, naming both sizes, and writes nothing.
func TestKargsCapacity(t *testing.T) {
	for _, name := range kargsFixtures {
		t.Run(name, func(t *testing.T) {
			iso := fixtures.File(t, name)
			pristine := fileSHA(t, iso)
			info := inspectJSON(t, iso)
			size := info.Kargs.Size
			usable := size - (len(info.Kargs.Default) + 1) - 1

			fits := strings.Repeat("a", usable)
			out := filepath.Join(t.TempDir(), "fits.iso")
			mustSno(t, nil, "kargs", "modify", "-a", fits, "-o", out, iso)
			if got := showKargs(t, out); !strings.HasSuffix(got, " "+fits) || len(got) != size-1 {
				t.Fatalf("kargs of %d bytes after appending %d: %q", len(got), usable, got)
			}

			dir := t.TempDir()
			tooLong := fits + "a"
			for _, args := range [][]string{{"-o", "-"}, {"-o", filepath.Join(dir, "out.iso")}, {}} {
				r := sno(t, nil, append(append([]string{"kargs", "modify", "-a", tooLong}, args...), iso)...)
				wantFailure(t, r, "kargs too large for area", strconv.Itoa(size+1), strconv.Itoa(size))
				if len(r.stdout) != 0 {
					t.Errorf("%v: wrote %d bytes to stdout", args, len(r.stdout))
				}
			}
			if ents := dirEntries(t, dir); len(ents) != 0 {
				t.Fatalf("left behind %v", ents)
			}
			if fileSHA(t, iso) != pristine {
				t.Fatal("a failed modify changed the ISO")
			}
		})
	}
}

// TestKargsAreaBytes checks each area byte for byte after `modify -a foobar=val`: the kargs,
// the end character and the pad, "\n" and "#" for the bootloader configs, NULs on s390x.
func TestKargsAreaBytes(t *testing.T) {
	for _, name := range kargsFixtures {
		t.Run(name, func(t *testing.T) {
			iso := fixtures.File(t, name)
			before, _ := os.ReadFile(iso)
			info := inspectJSON(t, iso)
			mustSno(t, nil, "kargs", "modify", "-a", "foobar=val", iso)
			after, _ := os.ReadFile(iso)

			kargs := info.Kargs.Default + " foobar=val"
			end, pad := "\n", "#"
			if info.Arch == "s390x" {
				end, pad = "\x00", "\x00"
			}
			want := kargs + end + strings.Repeat(pad, info.Kargs.Size-len(kargs)-1)
			for _, a := range info.Kargs.Areas {
				if got := string(after[a.Offset : a.Offset+int64(info.Kargs.Size)]); got != want {
					t.Errorf("area at %d:\n got %q\nwant %q", a.Offset, got, want)
				}
			}
			// Nothing else changed: the default copy and every byte outside the areas.
			for _, a := range info.Kargs.Areas {
				copy(after[a.Offset:a.Offset+int64(info.Kargs.Size)], before[a.Offset:])
			}
			if !bytes.Equal(before, after) {
				t.Error("modify changed bytes outside the karg areas")
			}
		})
	}
}

// TestKargsUnsupported is unsupported.sh: the 2020-09 ISO has no karg areas, and every kargs
// command says so in every output mode, writing nothing.
func TestKargsUnsupported(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2020-09.iso")
	pristine := fileSHA(t, iso)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"kargs", "show"},
		{"kargs", "show", "--default"},
		{"kargs", "modify", "-a", "foo"},
		{"kargs", "modify", "-a", "foo", "-o", "-"},
		{"kargs", "modify", "-a", "foo", "-o", filepath.Join(dir, "out.iso")},
		{"kargs", "reset"},
		{"kargs", "reset", "-o", "-"},
		{"kargs", "reset", "-o", filepath.Join(dir, "out.iso")},
	} {
		r := sno(t, nil, append(args, iso)...)
		wantFailure(t, r, "no karg embed areas found", iso)
		if len(r.stdout) != 0 {
			t.Errorf("%v: wrote %d bytes to stdout", args, len(r.stdout))
		}
	}
	if fileSHA(t, iso) != pristine {
		t.Fatal("the ISO changed")
	}
	if ents := dirEntries(t, dir); len(ents) != 0 {
		t.Fatalf("left behind %v", ents)
	}
}

// TestKargsWithoutHeaderMagic: with the coreKarg magic zeroed, ISOs that have kargs.json
// still work through it; the 2021-01 ISO, which has only the header, then has no kargs.
func TestKargsWithoutHeaderMagic(t *testing.T) {
	for name, works := range map[string]bool{"embed-areas-2021-12.iso": true, "embed-areas-2021-01.iso": false} {
		iso := fixtures.File(t, name)
		b, _ := os.ReadFile(iso)
		copy(b[32672:32680], make([]byte, 8))
		os.WriteFile(iso, b, 0o644)
		if !works {
			wantFailure(t, sno(t, nil, "kargs", "show", iso), "no karg embed areas found")
			continue
		}
		pristine := fileSHA(t, iso)
		mustSno(t, nil, "kargs", "modify", "-a", "foo", iso)
		if got := showKargs(t, iso); !strings.HasSuffix(got, " foo") {
			t.Fatalf("%s: kargs %q", name, got)
		}
		mustSno(t, nil, "kargs", "reset", iso)
		if fileSHA(t, iso) != pristine {
			t.Fatalf("%s: reset did not restore the bytes", name)
		}
	}
}

// TestKargsAreasDisagree: when a tool rewrote only one area, show and modify refuse with both
// values, and reset (which does not read them) repairs the ISO.
func TestKargsAreasDisagree(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	pristine := fileSHA(t, iso)
	info := inspectJSON(t, iso)
	b, _ := os.ReadFile(iso)
	second := info.Kargs.Areas[1].Offset
	copy(b[second:], "nomodeset\n")
	os.WriteFile(iso, b, 0o644)

	wantFailure(t, sno(t, nil, "kargs", "show", iso), "disagree", "nomodeset", "kargs reset")
	wantFailure(t, sno(t, nil, "kargs", "modify", "-a", "foo", iso), "disagree")
	mustSno(t, nil, "kargs", "reset", iso)
	if fileSHA(t, iso) != pristine {
		t.Fatal("reset did not repair the areas")
	}
}

func TestKargsModifyUsage(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	pristine := fileSHA(t, iso)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"kargs", "modify", iso}, 2, "at least one"},
		{[]string{"kargs", "modify", "-r", "foo=bar", iso}, 1, "format should be: KEY=OLD=NEW"},
		{[]string{"kargs", "modify", "-r", "a=b=c=d", iso}, 1, "format should be: KEY=OLD=NEW"},
		{[]string{"kargs", "modify", "-a", "foo\nset root=(hd0)", iso}, 1, "control character"},
		{[]string{"kargs", "show", iso, iso}, 2, "exactly one ISO"},
	}
	for _, c := range cases {
		r := sno(t, nil, c.args...)
		wantFailure(t, r, c.want)
		if r.code != c.code {
			t.Errorf("%q: exit %d, want %d", c.args, r.code, c.code)
		}
	}
	if fileSHA(t, iso) != pristine {
		t.Fatal("the ISO changed")
	}
	// Options may follow the ISO, and short ones combine, as with coreos-installer.
	mustSno(t, nil, "kargs", "modify", iso, "-a", "console=ttyS0,115200n8", "-d", "mitigations=auto,nosmt")
	if got := showKargs(t, iso); strings.Contains(got, "mitigations") || !strings.HasSuffix(got, " console=ttyS0,115200n8") {
		t.Fatalf("kargs %q", got)
	}
}

// TestKargsOutputExists: -o refuses an existing file unless --force.
func TestKargsOutputExists(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	out := writeFile(t, filepath.Join(t.TempDir(), "out.iso"), "keep me")
	wantFailure(t, sno(t, nil, "kargs", "modify", "-a", "foo", "-o", out, iso), "exists")
	if b, _ := os.ReadFile(out); string(b) != "keep me" {
		t.Fatal("the existing output was replaced without --force")
	}
	mustSno(t, nil, "kargs", "modify", "-a", "foo", "-f", "-o", out, iso)
	if got := showKargs(t, out); !strings.HasSuffix(got, " foo") {
		t.Fatalf("kargs %q", got)
	}
}
