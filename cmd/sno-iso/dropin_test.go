package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// dropInBinary links the built binary as coreos-installer in a temporary directory, as
// `make install COREOS_INSTALLER_LINK=1` does, and returns the link.
func dropInBinary(t testing.TB) string {
	t.Helper()
	link := filepath.Join(t.TempDir(), "coreos-installer")
	if err := os.Symlink(snoISO(t), link); err != nil {
		testenv.Missing(t, "cannot make a symbolic link here: %v", err)
	}
	return link
}

// spellings runs the same steps as sno-iso and as coreos-installer, each on its own copy of a
// fixture, and checks after each step that the two copies and standard outputs are identical.
type spellings struct {
	t        *testing.T
	ci       string
	snoISO   string // sno-iso's copy
	ciISO    string // coreos-installer's copy
	snoDir   string
	ciDir    string
	pristine string
}

func newSpellings(t *testing.T, fixture string) *spellings {
	s := &spellings{t: t, ci: dropInBinary(t), snoDir: t.TempDir(), ciDir: t.TempDir()}
	s.pristine = bytesSHA(fixtures.Bytes(t, fixture))
	s.snoISO = writeTestFile(t, s.snoDir, "rhcos.iso", fixtures.Bytes(t, fixture))
	s.ciISO = writeTestFile(t, s.ciDir, "rhcos.iso", fixtures.Bytes(t, fixture))
	return s
}

// step runs sno-iso with snoArgs and coreos-installer with ciArgs, each in the directory of
// its own copy of the ISO, rhcos.iso, and returns the common standard output.
func (s *spellings) step(stdin []byte, snoArgs, ciArgs []string) []byte {
	s.t.Helper()
	sno := runBinary(s.t, snoISO(s.t), s.snoDir, stdin, snoArgs...)
	ci := runBinary(s.t, s.ci, s.ciDir, stdin, ciArgs...)
	if sno.code != 0 || ci.code != 0 {
		s.t.Fatalf("sno-iso %v: exit %d %s\ncoreos-installer %v: exit %d %s", snoArgs, sno.code, sno.stderr, ciArgs, ci.code, ci.stderr)
	}
	if !bytes.Equal(sno.stdout, ci.stdout) {
		s.t.Fatalf("standard outputs differ:\nsno-iso %v: %q\ncoreos-installer %v: %q", snoArgs, sno.stdout, ciArgs, ci.stdout)
	}
	if a, b := fileSHA(s.t, s.snoISO), fileSHA(s.t, s.ciISO); a != b {
		s.t.Fatalf("after sno-iso %v and coreos-installer %v the ISOs differ", snoArgs, ciArgs)
	}
	return sno.stdout
}

// TestDropInEditsAsSnoISO runs coreos-installer's ISO editing command lines and sno-iso's
// equivalents side by side: in place, to a file and to standard output, they leave identical
// ISOs and print identical outputs, and undoing everything gives back the pristine ISO.
func TestDropInEditsAsSnoISO(t *testing.T) {
	for _, fixture := range []string{"embed-areas-2023-07.x86_64.iso", "embed-areas-2023-07.s390x.iso", "embed-areas-2021-12.iso"} {
		t.Run(fixture, func(t *testing.T) {
			s := newSpellings(t, fixture)
			in := t.TempDir()
			cfg := writeTestFile(t, in, "config.ign", []byte(smallConfig))
			a := writeTestFile(t, in, "a.nmconnection", []byte("[connection]\nid=a\n"))
			b := writeTestFile(t, in, "b.nmconnection", []byte("[connection]\nid=b\n"))

			s.step(nil, []string{"ignition", "embed", "-i", cfg, "rhcos.iso"}, []string{"iso", "ignition", "embed", "--ignition-file", cfg, "rhcos.iso"})
			if got := s.step(nil, []string{"ignition", "show", "rhcos.iso"}, []string{"iso", "ignition", "show", "rhcos.iso"}); string(got) != smallConfig {
				t.Fatalf("ignition show = %q, want the embedded config", got)
			}
			// The config from standard input, replacing the first with -f; options after the ISO.
			s.step([]byte(smallConfig), []string{"ignition", "embed", "-f", "rhcos.iso"}, []string{"iso", "ignition", "embed", "rhcos.iso", "--force"})
			s.step(nil, []string{"network", "embed", "-k", a, "-k", b, "rhcos.iso"}, []string{"iso", "network", "embed", "--keyfile", b, "-k", a, "rhcos.iso"})
			if got := s.step(nil, []string{"network", "extract", "rhcos.iso"}, []string{"iso", "network", "extract", "rhcos.iso"}); !bytes.Contains(got, []byte("id=a")) || !bytes.Contains(got, []byte("id=b")) {
				t.Fatalf("network extract = %q", got)
			}
			s.step(nil, []string{"kargs", "modify", "-a", "foobar=oldval", "-a", "dodo", "rhcos.iso"}, []string{"iso", "kargs", "modify", "--append", "foobar=oldval", "-a", "dodo", "rhcos.iso"})
			shown := s.step(nil, []string{"kargs", "show", "rhcos.iso"}, []string{"iso", "kargs", "show", "rhcos.iso"})
			if !strings.HasSuffix(string(shown), " foobar=oldval dodo\n") {
				t.Fatalf("kargs show = %q", shown)
			}
			defaults := s.step(nil, []string{"kargs", "show", "-d", "rhcos.iso"}, []string{"iso", "kargs", "show", "--default", "rhcos.iso"})
			if strings.Contains(string(defaults), "foobar") {
				t.Fatalf("kargs show -d = %q", defaults)
			}
			// To a new file: both edit their own copy into DIR/out.iso, then take it as the ISO.
			s.step(nil, []string{"kargs", "modify", "-r", "foobar=oldval=newval", "-d", "dodo", "-o", "out.iso", "rhcos.iso"},
				[]string{"iso", "kargs", "modify", "--replace", "foobar=oldval=newval", "--delete", "dodo", "--output", "out.iso", "rhcos.iso"})
			if fileSHA(t, filepath.Join(s.snoDir, "out.iso")) != fileSHA(t, filepath.Join(s.ciDir, "out.iso")) {
				t.Fatal("kargs modify -o wrote different ISOs")
			}
			// To standard output.
			stream := s.step(nil, []string{"ignition", "remove", "-o", "-", "rhcos.iso"}, []string{"iso", "ignition", "remove", "-o", "-", "rhcos.iso"})
			s.step(nil, []string{"ignition", "remove", "rhcos.iso"}, []string{"iso", "ignition", "remove", "rhcos.iso"})
			if bytesSHA(stream) != fileSHA(t, s.snoISO) {
				t.Fatal("ignition remove -o - differs from ignition remove in place")
			}
			s.step(nil, []string{"network", "remove", "rhcos.iso"}, []string{"iso", "network", "remove", "rhcos.iso"})
			s.step(nil, []string{"kargs", "reset", "rhcos.iso"}, []string{"iso", "kargs", "reset", "rhcos.iso"})
			if fileSHA(t, s.snoISO) != s.pristine {
				t.Fatal("removing everything did not give back the pristine ISO")
			}
			s.step(nil, []string{"kargs", "modify", "-a", "x", "rhcos.iso"}, []string{"iso", "kargs", "modify", "-a", "x", "rhcos.iso"})
			s.step([]byte(smallConfig), []string{"ignition", "embed", "rhcos.iso"}, []string{"iso", "ignition", "embed", "rhcos.iso"})
			s.step(nil, []string{"reset", "rhcos.iso"}, []string{"iso", "reset", "rhcos.iso"})
			if fileSHA(t, s.snoISO) != s.pristine {
				t.Fatal("reset did not give back the pristine ISO")
			}
		})
	}
}

// TestDropInExtractsAsSnoISO: iso extract pxe, iso extract minimal-iso (standard output by
// default) and pxe ignition wrap/unwrap give what sno-iso's commands give.
func TestDropInExtractsAsSnoISO(t *testing.T) {
	s := newSpellings(t, "embed-areas-2023-07.x86_64.iso")
	listed := s.step(nil, []string{"pxe", "extract", "-o", "pxe", "rhcos.iso"}, []string{"iso", "extract", "pxe", "-o", "pxe", "rhcos.iso"})
	if string(listed) != "pxe/rhcos-initrd.img\npxe/rhcos-rootfs.img\npxe/rhcos-vmlinuz\n" {
		t.Errorf("extract pxe listed %q", listed)
	}
	for _, name := range []string{"rhcos-initrd.img", "rhcos-rootfs.img", "rhcos-vmlinuz"} {
		if fileSHA(t, filepath.Join(s.snoDir, "pxe", name)) != fileSHA(t, filepath.Join(s.ciDir, "pxe", name)) {
			t.Errorf("%s differs", name)
		}
	}
	minimal := s.step(nil, []string{"minimal", "--rootfs-url", "https://example.com/rootfs", "rhcos.iso", "-"},
		[]string{"iso", "extract", "minimal-iso", "--rootfs-url", "https://example.com/rootfs", "rhcos.iso"})
	ci := dropInBinary(t)
	out := filepath.Join(t.TempDir(), "minimal.iso")
	mustRun(t, ci, nil, "iso", "extract", "minimal-iso", s.ciISO, out, "--rootfs-url", "https://example.com/rootfs")
	if fileSHA(t, out) != bytesSHA(minimal) {
		t.Error("minimal-iso to a file differs from minimal-iso to standard output")
	}
	if kargs := mustRun(t, ci, nil, "iso", "kargs", "show", out); !strings.Contains(string(kargs), "coreos.live.rootfs_url=https://example.com/rootfs") || strings.Contains(string(kargs), "coreos.liveiso=") {
		t.Errorf("minimal ISO kargs = %q", kargs)
	}

	cfg := writeTestFile(t, t.TempDir(), "config.ign", []byte(smallConfig))
	wrapped := s.step(nil, []string{"pxe", "ignition", "wrap", "-i", cfg}, []string{"pxe", "ignition", "wrap", "--ignition-file", cfg})
	if got := s.step(wrapped, []string{"pxe", "ignition", "unwrap"}, []string{"pxe", "ignition", "unwrap"}); string(got) != smallConfig {
		t.Errorf("pxe ignition unwrap = %q", got)
	}
}

// mustRun runs bin and fails the test unless it succeeds.
func mustRun(t testing.TB, bin string, stdin []byte, args ...string) []byte {
	t.Helper()
	r := runBinary(t, bin, "", stdin, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: exit %d\n%s", filepath.Base(bin), strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// TestDropInEmbedsUnvalidated: coreos-installer embeds any bytes, with a warning here, where
// sno-iso's own spelling refuses a config the live system would reject.
func TestDropInEmbedsUnvalidated(t *testing.T) {
	// coreos-installer's iso-ignition.sh config, deliberately missing its closing brace.
	broken := []byte(`{"ignition": {"version": "3.0.0"}` + "\n")
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	wantFailure(t, sno(t, broken, "ignition", "embed", "-o", filepath.Join(t.TempDir(), "x.iso"), iso), "not a valid Ignition config")
	ci := dropInBinary(t)
	r := runBinary(t, ci, "", broken, "iso", "ignition", "embed", iso)
	if r.code != 0 || !strings.HasPrefix(string(r.stderr), "Warning: standard input is not a valid Ignition config") {
		t.Fatalf("exit %d, stderr %q; want success with a warning", r.code, r.stderr)
	}
	if got := mustRun(t, ci, nil, "iso", "ignition", "show", iso); !bytes.Equal(got, broken) {
		t.Fatalf("show = %q, want the bytes embedded", got)
	}
}

// TestDropInShowISO decodes dev show iso's three documents and checks them against what the
// fixtures' README and spec/coreos-live-iso.md section 8 measured.
func TestDropInShowISO(t *testing.T) {
	ci := dropInBinary(t)
	x86 := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	s390x := fixtures.File(t, "embed-areas-2023-07.s390x.iso")
	type area struct {
		Offset int64   `json:"offset"`
		Length int64   `json:"length"`
		Pad    *string `json:"pad"`
		End    *string `json:"end"`
	}
	ignition := func(iso string) (a area) {
		decodeStrict(t, mustRun(t, ci, nil, "dev", "show", "iso", "--ignition", iso), &a)
		return a
	}
	if ign := ignition(x86); ign.Offset != 139264 || ign.Length != 262144 || ign.Pad != nil || ign.End != nil {
		t.Errorf("x86_64 --ignition = %+v, want offset 139264, length 262144", ign)
	}
	if ign := ignition(s390x); ign.Offset != 203776 || ign.Length != 262144 {
		t.Errorf("s390x --ignition = %+v, want offset 203776, length 262144", ign)
	}
	type kargs struct {
		Length  int    `json:"length"`
		Default string `json:"default"`
		Kargs   []area `json:"kargs"`
	}
	kargsOf := func(iso string) (k kargs) {
		decodeStrict(t, mustRun(t, ci, nil, "dev", "show", "iso", "--kargs", iso), &k)
		return k
	}
	if k := kargsOf(x86); k.Length != 1139 || !strings.Contains(k.Default, "coreos.liveiso=fedora-coreos-38.20230718.dev.0") || len(k.Kargs) != 2 ||
		k.Kargs[0].Offset != 137037 || k.Kargs[1].Offset != 408522 || k.Kargs[0].Length != 1139 ||
		k.Kargs[0].Pad == nil || *k.Kargs[0].Pad != "#" || k.Kargs[0].End == nil || *k.Kargs[0].End != "\n" {
		t.Errorf("x86_64 --kargs = %+v", k)
	}
	if k := kargsOf(s390x); k.Length != 896 || len(k.Kargs) != 1 || k.Kargs[0].Offset != 138368 ||
		k.Kargs[0].Pad == nil || *k.Kargs[0].Pad != "\x00" || k.Kargs[0].End == nil || *k.Kargs[0].End != "\x00" {
		t.Errorf("s390x --kargs = %+v", k)
	}
	// 2021-12's kargs.json names no pad or end: neither is shown.
	if k := kargsOf(fixtures.File(t, "embed-areas-2021-12.iso")); k.Length != 1139 || len(k.Kargs) != 2 || k.Kargs[0].Pad != nil || k.Kargs[0].End != nil {
		t.Errorf("2021-12 --kargs = %+v", k)
	}
	if got := mustRun(t, ci, nil, "dev", "show", "iso", "--kargs", fixtures.File(t, "embed-areas-2020-09.iso")); string(got) != "null\n" {
		t.Errorf("--kargs of an ISO without kargs areas = %q, want null", got)
	}

	type document struct {
		Header struct {
			Descriptors []struct {
				Type            string `json:"type"`
				SystemID        string `json:"system_id"`
				VolumeID        string `json:"volume_id"`
				VolumeSpaceSize uint32 `json:"volume_space_size"`
				Root            *struct {
					Name    string `json:"name"`
					Address uint32 `json:"address"`
					Length  uint32 `json:"length"`
				} `json:"root"`
				BootSystemID string `json:"boot_system_id"`
				BootID       string `json:"boot_id"`
			} `json:"descriptors"`
		} `json:"header"`
		Records []string `json:"records"`
	}
	var doc document
	decodeStrict(t, mustRun(t, ci, nil, "dev", "show", "iso", x86), &doc)
	var types []string
	for _, d := range doc.Header.Descriptors {
		types = append(types, d.Type)
	}
	if !slices.Equal(types, []string{"primary", "boot", "supplementary"}) {
		t.Fatalf("descriptor types %v, want primary, boot, supplementary", types)
	}
	p, boot := doc.Header.Descriptors[0], doc.Header.Descriptors[1]
	if p.SystemID != "LINUX" || p.VolumeID != "fedora-coreos-38.20230718.dev.0" || p.VolumeSpaceSize != 362 ||
		p.Root == nil || p.Root.Name != "." || p.Root.Address != 29 {
		t.Errorf("primary descriptor %+v (root %+v)", p, p.Root)
	}
	if !strings.Contains(boot.BootSystemID, "EL TORITO") {
		t.Errorf("boot descriptor %+v", boot)
	}
	for _, want := range []string{"EFI", "IMAGES/PXEBOOT", "IMAGES/PXEBOOT/ROOTFS.IMG", "COREOS/IGNINFO.JSO", "COREOS/KARGS.JSO"} {
		if !slices.Contains(doc.Records, want) {
			t.Errorf("records lack %s: %v", want, doc.Records)
		}
	}
	// Any ISO9660 image, CoreOS or not.
	var synthetic document
	decodeStrict(t, mustRun(t, ci, nil, "dev", "show", "iso", fixtures.File(t, "synthetic.iso")), &synthetic)
	if p := synthetic.Header.Descriptors[0]; p.VolumeID != "volume-ID-string" || p.SystemID != "system-ID-string" || p.VolumeSpaceSize != 338 {
		t.Errorf("synthetic.iso primary descriptor %+v", p)
	}
}

// decodeStrict decodes a dev show iso document into v, whose tags are coreos-installer's field
// names, refusing unknown fields so that a misspelt name fails.
func decodeStrict(t testing.TB, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
}

// TestDropInExitCodes: errors exit 1 and bad command lines 2, as with coreos-installer; a
// coreos-installer command the drop-in does not provide says so and exits 1.
func TestDropInExitCodes(t *testing.T) {
	ci := dropInBinary(t)
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"iso", "ignition", "show", iso}, 1, "No embedded Ignition config"},
		{[]string{"iso", "ignition", "embed"}, 2, "exactly one ISO"},
		{[]string{"iso", "ignition", "embed", "--frobnicate", iso}, 2, "frobnicate"},
		{[]string{"iso", "network", "embed", iso}, 2, "--keyfile"},
		{[]string{"iso", "ignitoin", "show", iso}, 2, "ignitoin"},
		{[]string{"dev", "show", "iso", "--ignition", "--kargs", iso}, 2, "cannot be used together"},
		{[]string{"install", "--dest-device", "/dev/sda", "-i", "config.ign"}, 1, "`coreos-installer install` is not provided"},
		{[]string{"iso", "customize", "--dest-device", "/dev/sda", iso}, 2, "give the bootstrap-in-place config"},
		{[]string{"pxe", "customize", "--dest-device", "/dev/sda", "-o", "x.img", "initrd.img"}, 2, "give the bootstrap-in-place config"},
		{[]string{"pxe", "network", "wrap", "-k", "a.nmconnection"}, 1, "`coreos-installer pxe network` is not provided"},
	} {
		r := runBinary(t, ci, "", nil, c.args...)
		if r.code != c.code || !strings.Contains(string(r.stderr), c.want) {
			t.Errorf("coreos-installer %v: exit %d, stderr %q; want exit %d mentioning %q", c.args, r.code, r.stderr, c.code, c.want)
		}

	}
	// An existing output is kept, and the advice names no option coreos-installer lacks.
	dir := t.TempDir()
	cfg := writeTestFile(t, dir, "config.ign", []byte(smallConfig))
	existing := writeTestFile(t, dir, "existing", []byte("keep me"))
	for _, args := range [][]string{
		{"pxe", "ignition", "wrap", "-i", cfg, "-o", existing},
		{"iso", "ignition", "embed", "-f", "-i", cfg, "-o", existing, iso},
		{"iso", "extract", "minimal-iso", iso, existing},
	} {
		r := runBinary(t, ci, "", nil, args...)
		if r.code != 1 || !strings.Contains(string(r.stderr), "File exists; remove it or name another output") {
			t.Errorf("coreos-installer %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		if got, _ := os.ReadFile(existing); string(got) != "keep me" {
			t.Fatalf("coreos-installer %v replaced an existing output", args)
		}
	}
	// coreos-installer allows kargs modify without edits; sno-iso's own spelling asks for one.
	mustRun(t, ci, nil, "iso", "kargs", "modify", iso)
	if r := sno(t, nil, "kargs", "modify", iso); r.code != 2 {
		t.Errorf("sno-iso kargs modify without edits: exit %d, want 2", r.code)
	}
}

// TestDropInDeprecatedCommands: coreos-installer's hidden iso embed|show|remove still work,
// saying which command replaces them, and embed the same bytes as iso ignition embed.
func TestDropInDeprecatedCommands(t *testing.T) {
	s := newSpellings(t, "embed-areas-2023-07.x86_64.iso")
	cfg := writeTestFile(t, t.TempDir(), "config.ign", []byte(smallConfig))
	s.step(nil, []string{"ignition", "embed", "-i", cfg, "rhcos.iso"}, []string{"iso", "embed", "--config", cfg, "rhcos.iso"})
	r := runBinary(t, s.ci, s.ciDir, nil, "iso", "show", "rhcos.iso")
	if r.code != 0 || string(r.stdout) != smallConfig || !strings.HasPrefix(string(r.stderr), "`iso show` is deprecated; use `iso ignition show`.") {
		t.Fatalf("iso show: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	s.step(nil, []string{"ignition", "remove", "rhcos.iso"}, []string{"iso", "remove", "rhcos.iso"})
	if fileSHA(t, s.ciISO) != s.pristine {
		t.Fatal("iso remove did not give back the pristine ISO")
	}
}

// TestDropInName: the drop-in is chosen by the program's file name only, in any case, with
// or without Windows' .exe.
func TestDropInName(t *testing.T) {
	for arg0, want := range map[string]bool{
		"coreos-installer":                true,
		"/usr/local/bin/coreos-installer": true,
		"coreos-installer.exe":            true,
		"COREOS-INSTALLER.EXE":            true,
		"Coreos-Installer":                true,
		"sno-iso":                         false,
		"coreos-installer-wrapper":        false,
		"coreos-installer.sh":             false,
		"/opt/coreos-installer/sno-iso":   false,
	} {
		if got := isDropInName(arg0); got != want {
			t.Errorf("isDropInName(%q) = %v, want %v", arg0, got, want)
		}
	}
}

// TestShortOptionValues: a value may follow its short option in the same argument, alone
// (-iconfig.ign, -afoo, -o-) or after combined flags (-ficonfig.ign), as coreos-installer's
// parser takes it, in both spellings; an unknown short option is named as given.
func TestShortOptionValues(t *testing.T) {
	s := newSpellings(t, "embed-areas-2023-07.x86_64.iso")
	in := t.TempDir()
	first := writeTestFile(t, in, "first.ign", []byte(smallConfig))
	const secondConfig = `{"ignition":{"version":"3.2.0"},"storage":{}}` + "\n"
	second := writeTestFile(t, in, "second.ign", []byte(secondConfig))
	s.step(nil, []string{"ignition", "embed", "-i" + first, "rhcos.iso"}, []string{"iso", "ignition", "embed", "-i" + first, "rhcos.iso"})
	s.step(nil, []string{"ignition", "embed", "rhcos.iso", "-fi" + second}, []string{"iso", "ignition", "embed", "rhcos.iso", "-fi" + second})
	if got := s.step(nil, []string{"ignition", "show", "rhcos.iso"}, []string{"iso", "ignition", "show", "rhcos.iso"}); string(got) != secondConfig {
		t.Errorf("after -fi%s, show = %q", second, got)
	}
	s.step(nil, []string{"kargs", "modify", "-afoo", "-a=bar", "rhcos.iso"}, []string{"iso", "kargs", "modify", "-afoo", "-a=bar", "rhcos.iso"})
	if got := s.step(nil, []string{"kargs", "show", "rhcos.iso"}, []string{"iso", "kargs", "show", "rhcos.iso"}); !strings.HasSuffix(string(got), " foo bar\n") {
		t.Errorf("after -afoo -a=bar, kargs show = %q", got)
	}
	stream := s.step(nil, []string{"reset", "-o-", "rhcos.iso"}, []string{"iso", "reset", "-o-", "rhcos.iso"})
	if bytesSHA(stream) != s.pristine {
		t.Error("reset -o- did not write the pristine ISO to standard output")
	}
	for _, bin := range []string{snoISO(t), s.ci} {
		args := []string{"ignition", "embed", "-fxi" + first, s.snoISO}
		if bin == s.ci {
			args = append([]string{"iso"}, args...)
		}
		r := runBinary(t, bin, "", nil, args...)
		if r.code != 2 || !strings.HasPrefix(string(r.stderr), "Error: unknown option -x;") {
			t.Errorf("%s %q: exit %d, stderr %q; want exit 2 naming -x", filepath.Base(bin), args, r.code, r.stderr)
		}
	}
}

// TestRepeatedOptionsRefused: an option that takes one value, or none, given twice is a usage
// error naming it, as with coreos-installer, rather than the last silently winning; options
// that take a list may repeat.
func TestRepeatedOptionsRefused(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	pristine := fileSHA(t, iso)
	in := t.TempDir()
	a := writeTestFile(t, in, "a.ign", []byte(smallConfig))
	b := writeTestFile(t, in, "b.ign", []byte(smallConfig))
	ci := dropInBinary(t)
	for _, c := range []struct {
		args []string // sno-iso's; the drop-in's have "iso" in front
		want string
	}{
		{[]string{"ignition", "embed", "-i", a, "-i", b, iso}, "--ignition-file (-i) cannot be used multiple times; give it once"},
		{[]string{"ignition", "embed", "--ignition-file=" + a, iso, "-i" + b}, "--ignition-file (-i) cannot be used multiple times; give it once"},
		{[]string{"ignition", "embed", "-i", a, "-ff", iso}, "--force (-f) cannot be used multiple times; give it once"},
		{[]string{"kargs", "modify", "-a", "x", "-o", "-", "--output", "-", iso}, "--output (-o) cannot be used multiple times; give it once"},
	} {
		for _, run := range []struct {
			bin  string
			args []string
		}{{snoISO(t), c.args}, {ci, append([]string{"iso"}, c.args...)}} {
			r := runBinary(t, run.bin, "", nil, run.args...)
			if got := strings.TrimSuffix(string(r.stderr), "\n"); r.code != 2 || got != "Error: "+c.want {
				t.Errorf("%s %q: exit %d, stderr %q; want exit 2, %q", filepath.Base(run.bin), run.args, r.code, got, "Error: "+c.want)
			}
		}
	}
	if fileSHA(t, iso) != pristine {
		t.Fatal("a refused command changed the ISO")
	}
	// A list option repeats, in either form.
	keyfiles := t.TempDir()
	k1 := writeTestFile(t, keyfiles, "k1.nmconnection", []byte("[connection]\nid=k1\n"))
	k2 := writeTestFile(t, keyfiles, "k2.nmconnection", []byte("[connection]\nid=k2\n"))
	out := mustRun(t, ci, nil, "iso", "network", "embed", "-k", k1, "--keyfile", k2, "-o", "-", iso)
	if len(out) == 0 {
		t.Error("network embed -k -k --keyfile wrote nothing")
	}
}

// TestDropInVersion: -V and --version print "coreos-installer VERSION" first, as clap does for
// scripts that take the second word, with sno-iso's version; sno-iso's own line is unchanged.
func TestDropInVersion(t *testing.T) {
	ci := dropInBinary(t)
	own := strings.Fields(string(mustSno(t, nil, "--version")))
	if len(own) < 3 || own[0] != "sno-iso" || own[1] != "version" {
		t.Fatalf("sno-iso --version = %q", own)
	}
	for _, flag := range []string{"-V", "--version"} {
		out := string(mustRun(t, ci, nil, flag))
		fields := strings.Fields(out)
		if strings.Count(out, "\n") != 1 || len(fields) < 3 || fields[0] != "coreos-installer" || fields[1] != own[2] ||
			!strings.HasPrefix(fields[2], "(sno-iso") || !strings.HasSuffix(out, ")\n") {
			t.Errorf("coreos-installer %s printed %q; want \"coreos-installer %s (sno-iso, ...)\"", flag, out, own[2])
		}
	}
	// clap has no -v.
	if r := runBinary(t, ci, "", nil, "-v"); r.code != 2 {
		t.Errorf("coreos-installer -v: exit %d, want 2", r.code)
	}
}

// TestDropInMissingSubcommand: without a subcommand, coreos-installer prints its help on
// standard error and exits 2, as clap does; --help prints it on standard output. sno-iso's own
// spelling prints the help on standard output and succeeds.
func TestDropInMissingSubcommand(t *testing.T) {
	ci := dropInBinary(t)
	for _, args := range [][]string{{}, {"iso"}, {"iso", "ignition"}, {"pxe", "ignition"}, {"dev", "show"}} {
		r := runBinary(t, ci, "", nil, args...)
		name := strings.Join(append([]string{"coreos-installer"}, args...), " ")
		if r.code != 2 || len(r.stdout) != 0 || !strings.Contains(string(r.stderr), "USAGE:\n   "+name+" ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want its help on standard error and exit 2", name, r.code, r.stdout, r.stderr)
		}
		help := mustRun(t, ci, nil, append(args, "--help")...)
		if !strings.Contains(string(help), "USAGE:\n   "+name+" ") {
			t.Errorf("%s --help printed %q", name, help)
		}
	}
	if out := mustSno(t, nil, "ignition"); !strings.Contains(string(out), "USAGE:\n   sno-iso ignition ") {
		t.Errorf("sno-iso ignition printed %q", out)
	}
}

// TestDropInRootfsURL: coreos-installer takes any --rootfs-url but one with whitespace (or,
// here, what the bootloaders would cut it at), refused with its words and exit 1; one the live
// system cannot fetch is written with a warning. sno-iso's own minimal refuses both (see
// TestRootfsURLMustBeHTTP).
func TestDropInRootfsURL(t *testing.T) {
	ci := dropInBinary(t)
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	for _, url := range []string{"192.0.2.1/rootfs.img", "ftp://192.0.2.1/rootfs.img"} {
		out := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(url)+".iso")
		r := runBinary(t, ci, "", nil, "iso", "extract", "minimal-iso", "--rootfs-url", url, iso, out)
		if r.code != 0 || !strings.HasPrefix(string(r.stderr), "Warning: --rootfs-url: rootfs URL \""+url+"\"") ||
			!strings.Contains(string(r.stderr), "the live system will not be able to fetch its root file system from it\n") {
			t.Errorf("--rootfs-url %s: exit %d, stderr %q; want success with a warning", url, r.code, r.stderr)
			continue
		}
		if kargs := mustRun(t, ci, nil, "iso", "kargs", "show", out); !strings.Contains(string(kargs), " coreos.live.rootfs_url="+url) {
			t.Errorf("--rootfs-url %s: the minimal ISO's kargs are %q", url, kargs)
		}
	}
	for url, want := range map[string]string{
		"http://192.0.2.1/my rootfs.img": "forbidden whitespace found in 'http://192.0.2.1/my rootfs.img'",
		`http://192.0.2.1/"rootfs.img`:   "which the bootloaders do not pass to the kernel intact",
	} {
		out := filepath.Join(t.TempDir(), "minimal.iso")
		r := runBinary(t, ci, "", nil, "iso", "extract", "minimal-iso", "--rootfs-url", url, iso, out)
		if r.code != 1 || !strings.HasPrefix(string(r.stderr), "Error: ") || !strings.Contains(string(r.stderr), want) || strings.Contains(string(r.stderr), "sno-iso") {
			t.Errorf("--rootfs-url %q: exit %d, stderr %q; want exit 1 saying %q", url, r.code, r.stderr, want)
		}
		if _, err := os.Lstat(out); err == nil {
			t.Errorf("--rootfs-url %q: an output was written", url)
		}
	}
}

// TestDropInPrintedPaths: coreos-installer prints the files it extracts as DIR joined with
// the name, unnormalized, which scripts compare; sno-iso's own spelling prints them cleaned.
func TestDropInPrintedPaths(t *testing.T) {
	s := newSpellings(t, "embed-areas-2023-07.x86_64.iso")
	key := writeTestFile(t, t.TempDir(), "a.nmconnection", []byte("[connection]\nid=a\n"))
	s.step(nil, []string{"network", "embed", "-k", key, "rhcos.iso"}, []string{"iso", "network", "embed", "-k", key, "rhcos.iso"})
	pxeFiles := func(dir string) string {
		return dir + "rhcos-initrd.img\n" + dir + "rhcos-rootfs.img\n" + dir + "rhcos-vmlinuz\n"
	}
	for _, c := range []struct {
		bin  string
		args []string
		want string
	}{
		{s.ci, []string{"iso", "extract", "pxe", "rhcos.iso"}, pxeFiles("./")},
		{s.ci, []string{"iso", "extract", "pxe", "-o", "./e2/", "rhcos.iso"}, pxeFiles("./e2/")},
		{s.ci, []string{"iso", "extract", "pxe", "-o", "e2b", "rhcos.iso"}, pxeFiles("e2b/")},
		{s.ci, []string{"iso", "network", "extract", "-C", "./e3", "rhcos.iso"}, "./e3/a.nmconnection\n"},
		{snoISO(t), []string{"pxe", "extract", "-o", "./e4/", "rhcos.iso"}, pxeFiles("e4/")},
		{snoISO(t), []string{"network", "extract", "-C", "./e5", "rhcos.iso"}, "e5/a.nmconnection\n"},
	} {
		dir := s.ciDir
		if c.bin != s.ci {
			dir = s.snoDir
		}
		r := runBinary(t, c.bin, dir, nil, c.args...)
		if r.code != 0 || string(r.stdout) != c.want {
			t.Errorf("%s %q: exit %d, printed %q, want %q; stderr %q", filepath.Base(c.bin), c.args, r.code, r.stdout, c.want, r.stderr)
		}
	}
}

// TestDropInSuggestsItsCommands: the commands that the drop-in's errors and notes suggest are
// spelt as coreos-installer spells them, where it has them; sno-iso's spelling suggests its
// own.
func TestDropInSuggestsItsCommands(t *testing.T) {
	ci := dropInBinary(t)
	dir := t.TempDir()
	x86 := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	old := fixtures.File(t, "embed-areas-2021-01.iso")
	customized := writeTestFile(t, dir, "customized.iso", fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"))
	mustSno(t, nil, "kargs", "modify", "-a", "foo", customized)
	key := writeTestFile(t, dir, "a.nmconnection", []byte("[connection]\nid=a\n"))
	for _, c := range []struct {
		args      []string
		code      int
		want, not string
	}{
		{[]string{"iso", "extract", "minimal-iso", customized, filepath.Join(dir, "m1.iso")}, 1,
			"; reset it with `coreos-installer iso reset`, or start from the pristine ISO", "sno-iso reset"},
		{[]string{"iso", "network", "embed", "-k", key, "-o", filepath.Join(dir, "n.iso"), old}, 1,
			"`coreos-installer iso kargs modify -a`", "sno-iso kargs"},
		{[]string{"iso", "extract", "minimal-iso", x86, filepath.Join(dir, "m2.iso")}, 0,
			"added (coreos-installer iso kargs modify -a) or over PXE", "sno-iso kargs"},
		// coreos-installer has no command that rebuilds a minimal ISO: sno-iso's is named.
		{[]string{"iso", "extract", "minimal-iso", old, filepath.Join(dir, "m3.iso")}, 1,
			"`sno-iso minimal ISO OUT` rebuilds a minimal ISO", "coreos-installer iso extract minimal-iso ISO OUT"},
	} {
		r := runBinary(t, ci, "", nil, c.args...)
		if r.code != c.code || !strings.Contains(string(r.stderr), c.want) || strings.Contains(string(r.stderr), c.not) {
			t.Errorf("coreos-installer %q: exit %d, stderr %q; want exit %d, %q and not %q", c.args, r.code, r.stderr, c.code, c.want, c.not)
		}
	}
	if info, err := os.Stat(os.DevNull); err == nil && info.Mode()&fs.ModeDevice != 0 {
		r := runBinary(t, ci, "", nil, "iso", "extract", "minimal-iso", x86, os.DevNull)
		if want := "with coreos-installer iso extract minimal-iso " + x86 + " - > " + os.DevNull; r.code != 2 || !strings.Contains(string(r.stderr), want) {
			t.Errorf("minimal-iso to %s: exit %d, stderr %q; want %q", os.DevNull, r.code, r.stderr, want)
		}
	}
	if r := sno(t, nil, "minimal", customized, filepath.Join(dir, "m4.iso")); !strings.Contains(string(r.stderr), "reset it with `sno-iso reset` (or `coreos-installer iso reset`)") {
		t.Errorf("sno-iso minimal of a customized ISO: stderr %q", r.stderr)
	}
}

// TestDropInNamesWhatToRunInstead: each coreos-installer command that the drop-in does not
// provide exits 1 and names, in lines of fewer than 100 columns, the sno-iso command that does
// the job (or says that none does and to run coreos-installer itself).
func TestDropInNamesWhatToRunInstead(t *testing.T) {
	ci := dropInBinary(t)
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"install", "--dest-device", "/dev/sda", "-i", "config.ign"},
			[]string{"sno-iso build --iso ISO --ignition IGN --installation-disk DEV", "run coreos-installer itself"}},
		{[]string{"list-stream"}, []string{"openshift-install coreos print-stream-json"}},
		{[]string{"pxe", "network", "wrap", "-k", "a.nmconnection"}, []string{"sno-iso pxe build --network-keyfile FILE"}},
		{[]string{"pack", "osmet"}, []string{"run coreos-installer itself"}},
		{[]string{"dev", "show", "initrd", "x.img"}, []string{"sno-iso inspect ISO"}},
	} {
		r := runBinary(t, ci, "", nil, c.args...)
		stderr := string(r.stderr)
		if r.code != 1 || !strings.HasPrefix(stderr, "Error: `coreos-installer "+c.args[0]) || !strings.Contains(stderr, "is not provided") {
			t.Errorf("coreos-installer %v: exit %d, stderr %q; want exit 1 and not provided", c.args, r.code, stderr)
		}
		for _, w := range c.wants {
			if !strings.Contains(stderr, w) {
				t.Errorf("coreos-installer %v: stderr %q does not name %q", c.args, stderr, w)
			}
		}
		for _, line := range strings.Split(stderr, "\n") {
			if len(line) >= 100 {
				t.Errorf("coreos-installer %v: line of %d columns: %q", c.args, len(line), line)
			}
		}
	}
}
