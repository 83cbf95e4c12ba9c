package isobuilder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

const (
	testKargs     = "coreos.liveiso=hybrid-test ignition.firstboot ignition.platform.id=metal"
	testKargsSize = 1139
)

// hybridISO builds with xorriso a small live ISO laid out like RHCOS's: isolinux with a boot
// info table, a UEFI El Torito image that is also the ESP of a hybrid MBR/GPT, kargs areas in
// grub.cfg and isolinux.cfg, igninfo.json, kargs.json and a rootfs.
func hybridISO(t *testing.T) string {
	t.Helper()
	xorriso := testenv.Tool(t, "xorriso", "xorriso")
	const isolinux, mbr = "/usr/lib/ISOLINUX/isolinux.bin", "/usr/lib/ISOLINUX/isohdpfx.bin"
	for _, f := range []string{isolinux, mbr} {
		if _, err := os.Stat(f); err != nil {
			testenv.Missing(t, "%s is missing (Debian package isolinux); it makes the hybrid ISO for this test", f)
		}
	}
	area := testKargs + "\n" + strings.Repeat("#", testKargsSize-len(testKargs)-1)
	grubHead := "set timeout=0\nmenuentry 'Live' {\n\tlinux /images/pxeboot/vmlinuz "
	isoHead := "default linux\nlabel linux\n  kernel /images/pxeboot/vmlinuz\n  append initrd=/images/pxeboot/initrd.img,/images/ignition.img "
	bin, err := os.ReadFile(isolinux)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"isolinux/isolinux.bin":     string(bin),
		"isolinux/isolinux.cfg":     isoHead + area + "# COREOS_KARG_EMBED_AREA\n",
		"EFI/redhat/grub.cfg":       grubHead + area + "# COREOS_KARG_EMBED_AREA\n\tinitrd /images/pxeboot/initrd.img /images/ignition.img\n}\n# fallback: coreos.liveiso=hybrid-test\n",
		"images/efiboot.img":        strings.Repeat("E", 3*SectorSize+100),
		"images/ignition.img":       strings.Repeat("\x00", 256<<10),
		"images/pxeboot/vmlinuz":    "the kernel\n",
		"images/pxeboot/initrd.img": "the initramfs\n",
		"images/pxeboot/rootfs.img": strings.Repeat("rootfs..", 40000),
		"coreos/igninfo.json":       "{\n  \"file\": \"images/ignition.img\"\n}\n",
		"coreos/miniso.dat":         strings.Repeat("\x00", 16384),
		"coreos/features.json":      `{"live-initrd-network": true}`,
		"coreos/kargs.json": fmt.Sprintf(`{"default": %q, "files": [{"end": "\n", "offset": %d, "pad": "#", "path": "EFI/redhat/grub.cfg"}, {"end": "\n", "offset": %d, "pad": "#", "path": "isolinux/isolinux.cfg"}], "size": %d}`,
			testKargs, len(grubHead), len(isoHead), testKargsSize),
	}
	root := t.TempDir()
	tree := filepath.Join(root, "tree")
	for name, content := range files {
		p := filepath.Join(tree, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	iso := filepath.Join(root, "hybrid.iso")
	out, err := exec.Command(xorriso, "-as", "mkisofs", "-quiet", "-o", iso, "-V", "hybrid-test", "-sysid", "LINUX",
		"-iso-level", "1", "-r", "-J", "-joliet-long", "-isohybrid-mbr", mbr,
		"-b", "isolinux/isolinux.bin", "-c", "isolinux/boot.cat", "-no-emul-boot", "-boot-load-size", "4", "-boot-info-table",
		"-eltorito-alt-boot", "-e", "images/efiboot.img", "-no-emul-boot", "-isohybrid-gpt-basdat", tree).CombinedOutput()
	if err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	return iso
}

// rebuild runs Rebuild on src and returns the committed result.
func rebuild(t *testing.T, src string, opts RebuildOptions) string {
	t.Helper()
	l, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	d, err := l.Rebuild(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := commitDerived(t, d, filepath.Join(dir, "rebuilt.iso"))
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("the output directory holds %d entries, want only the result (no workspace, no temp file)", len(left))
	}
	return out
}

// filesByPath maps every file's Rock Ridge path to its contents.
func filesByPath(t *testing.T, iso string) map[string][]byte {
	t.Helper()
	l, err := Open(iso)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	files := map[string][]byte{}
	err = l.volume.Walk(func(e WalkEntry) error {
		if !e.Dir {
			b := make([]byte, e.Length)
			if _, err := l.ReadAt(b, e.Offset()); err != nil {
				return err
			}
			files[e.DisplayPath] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// xorrisoReport returns xorriso's report of the system area and El Torito boot records.
func xorrisoReport(t *testing.T, iso string) string {
	t.Helper()
	out, err := exec.Command("xorriso", "-indev", iso, "-report_system_area", "plain", "-report_el_torito", "plain").CombinedOutput()
	if err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	return string(out)
}

// bootLayout is the part of xorriso's report that says how the image boots, with the
// addresses removed: the same for the source and a rebuild.
func bootLayout(report string) []string {
	keep := regexp.MustCompile(`^(System area summary|MBR partition path|GPT partition path|GPT partname local|GPT type GUID|El Torito img path|El Torito img opts|El Torito cat path|MBR partition  |El Torito boot img)`)
	addresses := regexp.MustCompile(`\s+\d+\s+\d+\s*$`)
	var lines []string
	for _, l := range strings.Split(report, "\n") {
		if keep.MatchString(l) {
			lines = append(lines, addresses.ReplaceAllString(l, ""))
		}
	}
	return lines
}

func TestRebuildMinimalHybrid(t *testing.T) {
	src := hybridISO(t)
	const url = "https://example.com/rootfs.img?arch=x86_64&v=1"
	out := rebuild(t, src, RebuildOptions{Minimal: true, MinimalOptions: MinimalOptions{RootfsURL: url}})

	m, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.volume.VolumeID != "hybrid-test" || m.volume.SystemID != "LINUX" {
		t.Errorf("volume id %q, system id %q: want the source's", m.volume.VolumeID, m.volume.SystemID)
	}
	current, err := m.CurrentKargs()
	if err != nil {
		t.Fatal(err)
	}
	wantKargs := `ignition.firstboot ignition.platform.id=metal coreos.live.rootfs_url="` + url + `"`
	if current != wantKargs {
		t.Errorf("kargs %q, want %q", current, wantKargs)
	}
	if m.kargs.Default != "ignition.firstboot ignition.platform.id=metal" {
		t.Errorf("default kargs %q", m.kargs.Default)
	}
	// A later kargs edit works on the rebuilt areas.
	if _, err := m.KargsPatches(current + " foo"); err != nil {
		t.Errorf("the rebuilt kargs areas do not take an edit: %v", err)
	}

	before, after := filesByPath(t, src), filesByPath(t, out)
	for _, gone := range []string{"images/pxeboot/rootfs.img", "coreos/miniso.dat"} {
		if _, ok := after[gone]; ok {
			t.Errorf("%s is still in the minimal ISO", gone)
		}
	}
	for name, data := range before {
		switch name {
		case "images/pxeboot/rootfs.img", "coreos/miniso.dat", "isolinux/boot.cat":
			continue
		case "coreos/kargs.json": // rewritten in coreos-installer's pretty form, which may be longer
		case "EFI/redhat/grub.cfg", "isolinux/isolinux.cfg", "isolinux/isolinux.bin":
			if len(after[name]) != len(data) {
				t.Errorf("%s changed length from %d to %d bytes: the kargs offsets would move", name, len(data), len(after[name]))
			}
		default:
			if !bytes.Equal(after[name], data) {
				t.Errorf("%s differs from the source (%d bytes, want %d)", name, len(after[name]), len(data))
			}
		}
	}
	if grub := string(after["EFI/redhat/grub.cfg"]); strings.Contains(grub, "coreos.liveiso") {
		t.Errorf("grub.cfg still names coreos.liveiso:\n%s", grub)
	}
	if bin := after["isolinux/isolinux.bin"]; !bytes.Equal(bin[64:], before["isolinux/isolinux.bin"][64:]) {
		t.Error("isolinux.bin differs beyond its boot info table")
	}

	srcReport, outReport := xorrisoReport(t, src), xorrisoReport(t, out)
	for _, want := range []string{"MBR isohybrid cyl-align-on GPT", "MBR partition path :   2  /images/efiboot.img",
		"GPT partition path :   2  /images/efiboot.img", "El Torito img opts :   1  boot-info-table isohybrid-suitable",
		"El Torito img path :   2  /images/efiboot.img", "El Torito cat path : /isolinux/boot.cat"} {
		if !strings.Contains(outReport, want) {
			t.Errorf("xorriso report lacks %q:\n%s", want, outReport)
		}
	}
	if a, b := bootLayout(srcReport), bootLayout(outReport); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("boot layout differs from the source's:\n%s\nwant\n%s", strings.Join(b, "\n"), strings.Join(a, "\n"))
	}
	if st, _ := os.Stat(out); st.Size()%cylinderBytes != 0 {
		t.Errorf("the image is %d bytes, not padded to whole cylinders like its source", st.Size())
	}
	if again := rebuild(t, src, RebuildOptions{Minimal: true, MinimalOptions: MinimalOptions{RootfsURL: url}}); fileSHA256(t, again) != fileSHA256(t, out) {
		t.Error("rebuilding again gives different bytes")
	}
}

func TestRebuildGrowsIgnitionArea(t *testing.T) {
	src := hybridISO(t)
	const size = 1 << 20
	out := rebuild(t, src, RebuildOptions{IgnitionAreaSize: size})
	g, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.ignition.Length != size || g.ignition.File != "IMAGES/IGNITION.IMG" {
		t.Errorf("Ignition area %+v, want the whole %d-byte images/ignition.img", g.ignition, size)
	}
	if area, _ := g.IgnitionAreaBytes(); !bytes.Equal(area, make([]byte, size)) {
		t.Error("the grown area is not all zeros")
	}
	after := filesByPath(t, out)
	if got := string(after["coreos/igninfo.json"]); got != "{\n  \"file\": \"images/ignition.img\"\n}\n" {
		t.Errorf("igninfo.json %q", got)
	}
	if !bytes.Equal(after["images/pxeboot/rootfs.img"], filesByPath(t, src)["images/pxeboot/rootfs.img"]) {
		t.Error("the rootfs of a full ISO did not survive the rebuild")
	}
	if kargs, _ := g.CurrentKargs(); kargs != testKargs {
		t.Errorf("kargs %q, want the source's unchanged", kargs)
	}
	if !strings.Contains(xorrisoReport(t, out), "MBR isohybrid cyl-align-on GPT") {
		t.Error("the grown ISO lost its hybrid MBR/GPT")
	}
}

// TestRebuildFixtures rebuilds every CoreOS-built fixture as a minimal ISO: each layout
// (igninfo.json, coreiso+ header, kargs.json, coreKarg header, no kargs at all) reads back
// with its areas where its metadata says.
func TestRebuildFixtures(t *testing.T) {
	const url = "https://example.com/rootfs"
	for _, name := range fixtures.CoreOSISOs {
		t.Run(name, func(t *testing.T) {
			out := rebuild(t, fixtures.File(t, name), RebuildOptions{Minimal: true, MinimalOptions: MinimalOptions{RootfsURL: url}})
			m, err := Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if _, err := m.volume.Lookup(rootfsPath); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("rootfs.img: %v, want gone", err)
			}
			if area, err := m.IgnitionAreaBytes(); err != nil || len(area) != 262144 {
				t.Errorf("Ignition area %d bytes (%v)", len(area), err)
			}
			if m.kargs == nil {
				cfgs := filesByPath(t, out)
				for path, data := range cfgs {
					if isBootloaderConfig(path) && (bytes.Contains(data, []byte("coreos.liveiso")) || !bytes.Contains(data, []byte("coreos.live.rootfs_url="+url))) {
						t.Errorf("%s of an ISO without kargs areas was not edited:\n%s", path, data)
					}
				}
				return
			}
			current, err := m.CurrentKargs()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(current, "coreos.liveiso") || !strings.HasSuffix(current, " coreos.live.rootfs_url="+url) {
				t.Errorf("kargs %q", current)
			}
			if strings.Contains(m.kargs.Default, "coreos.liveiso") {
				t.Errorf("default kargs %q", m.kargs.Default)
			}
		})
	}
}

func TestRebuildRefusesBadURL(t *testing.T) {
	l, err := Open(fixtures.File(t, "embed-areas-2021-01.iso"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	_, err = l.Rebuild(context.Background(), dir, RebuildOptions{Minimal: true, MinimalOptions: MinimalOptions{RootfsURL: "http://x/$y"}})
	if err == nil || !strings.Contains(err.Error(), "percent-encode") {
		t.Errorf("error %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left %d entries behind", len(left))
	}
}

// A rebuild takes every date from the source ISO: two rebuilds with the wall clock on
// different seconds (the resolution of ISO9660 dates) give the same bytes.
func TestRebuildIsDeterministicAcrossTheClock(t *testing.T) {
	src := hybridISO(t)
	for _, opts := range []RebuildOptions{
		{Minimal: true, MinimalOptions: MinimalOptions{RootfsURL: "http://192.0.2.1/rootfs.img"}},
		{IgnitionAreaSize: 1 << 20},
	} {
		first := fileSHA256(t, rebuild(t, src, opts))
		now := time.Now()
		time.Sleep(now.Truncate(time.Second).Add(time.Second + 10*time.Millisecond).Sub(now))
		if again := fileSHA256(t, rebuild(t, src, opts)); again != first {
			t.Errorf("%+v: rebuilding a second later gives different bytes", opts)
		}
	}
}
