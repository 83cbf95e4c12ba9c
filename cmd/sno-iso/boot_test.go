package main

// Boot tests: scripts/mkliveiso builds a bootable look-alike of the RHCOS live
// ISO (Debian kernel, a busybox /init that reports what it finds), each case
// derives an image from it, and scripts/boot boots that image under QEMU and
// compares what /init saw (firmware, kargs, /config.ign, network keyfiles)
// with the case's expectations. A new boot case is one entry in bootCases.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/internal/bipgen"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/nmstate"
)

// Every way the media can be booted: firmware × CD or USB stick (the hybrid MBR/GPT).
var allBootModes = []string{"bios-cd", "uefi-cd", "bios-usb", "uefi-usb"}

// lookalikeKargs are the default kargs of the look-alike (scripts/mkliveiso).
var lookalikeKargs = []string{"coreos.liveiso=rhcos-lookalike-0 ignition.firstboot ignition.platform.id=metal"}

// bootConfig is the live Ignition config the cases embed.
var bootConfig = []byte(`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/sno-boot-test","contents":{"source":"data:,booted"}}]}}` + "\n")

var bootKeyfile = []byte("[connection]\nid=eno1\ntype=ethernet\ninterface-name=eno1\n\n[ipv4]\nmethod=auto\n")

type bootCase struct {
	name string
	// image returns the ISO to boot, made in dir from the pristine look-alike.
	image func(t *testing.T, pristine, dir string) string
	modes []string
	want  bootWant
}

// bootWant is what /init must report.
type bootWant struct {
	kargs    []string
	ignition []byte            // the content of /config.ign; nil: there is none
	network  map[string][]byte // the files in /etc/coreos-firstboot-network
	// kernelRejects marks a negative control: the kernel must refuse the embedded
	// archive, so checking for its content must fail, and fail only there.
	kernelRejects bool
}

var bootCases = []bootCase{
	{"pristine", pristineImage, allBootModes, bootWant{kargs: lookalikeKargs}},
	{"sno-iso-ignition-embed", snoISOEmbedImage(bootConfig), allBootModes, bootWant{kargs: lookalikeKargs, ignition: bootConfig}},
	// Controls written with the reference tools (cpio, xz) and dd, independent of sno-iso.
	{"control-xz-crc32", ddPayloadImage("crc32", bootConfig, bootKeyfile), []string{"bios-cd", "uefi-cd"},
		bootWant{kargs: lookalikeKargs, ignition: bootConfig, network: map[string][]byte{"eno1.nmconnection": bootKeyfile}}},
	{"control-xz-crc64-rejected", ddPayloadImage("crc64", bootConfig, nil), []string{"bios-cd", "uefi-cd"},
		bootWant{kargs: lookalikeKargs, ignition: bootConfig, kernelRejects: true}},
	// A static address both ways: a live ip= karg (in isolinux.cfg for BIOS, grub.cfg for UEFI)
	// and a keyfile next to config.ign.
	{"sno-iso-build-static-network", snoISOBuildImage(bootConfig, bootIPKarg, bootKeyfile), []string{"bios-cd", "uefi-cd"},
		bootWant{kargs: []string{lookalikeKargs[0], bootIPKarg}, ignition: bootConfig, network: map[string][]byte{"eno1.nmconnection": bootKeyfile}}},
	// Minimal ISOs (from miniso.dat, and rebuilt with moved files and a recreated hybrid
	// MBR/GPT), and an ISO rebuilt with a grown Ignition area holding a 1 MB config.
	{"minimal-miniso", minimalBootImage(false), allBootModes, bootWant{kargs: minimalBootKargs, ignition: bootConfig}},
	{"minimal-rebuilt", minimalBootImage(true), allBootModes, bootWant{kargs: minimalBootKargs, ignition: bootConfig}},
	{"grown-embed-area", grownBootImage, allBootModes, bootWant{kargs: lookalikeKargs, ignition: grownBootConfig}},
	// The main job: a bootstrap-in-place config through `sno-iso build` with an sno.yaml.
	{"sno-iso-build-bootstrap-in-place", bipBuildImage, allBootModes, bootWant{kargs: lookalikeKargs, ignition: bipBootPrepared}},
	// Static network from an NMState document: its keyfiles in the initramfs, and
	// install-to-disk copying them to the installed system; sno.yaml's hostname in the live
	// config's /etc/hostname and its MachineConfig.
	{"sno-iso-build-nmstate", nmstateBuildImage, []string{"bios-cd"},
		bootWant{kargs: lookalikeKargs, ignition: bipBootPreparedCopyNetwork, network: nmstateBootKeyfiles}},
}

// nmstateBootDoc is a bond of two NICs with a static address, a route and DNS.
const nmstateBootDoc = `interfaces:
  - name: bond0
    type: bond
    link-aggregation: {mode: active-backup, options: {miimon: 100}, port: [eno1, eno2]}
    ipv4:
      enabled: true
      address: [{ip: 192.0.2.10, prefix-length: 24}]
dns-resolver: {config: {server: [192.0.2.1]}}
routes: {config: [{destination: 0.0.0.0/0, next-hop-address: 192.0.2.1, next-hop-interface: bond0}]}
`

// nmstateBootHostname is the sno.yaml hostname of the NMState boot.
const nmstateBootHostname = "sno-boot.example.com"

// nmstateBootKeyfiles are the library's keyfiles for nmstateBootDoc, which the boot must find
// byte for byte; bipBootPreparedCopyNetwork is the live config with --copy-network and
// nmstateBootHostname.
var nmstateBootKeyfiles, bipBootPreparedCopyNetwork = prepareNMStateForBoot()

func prepareNMStateForBoot() (map[string][]byte, []byte) {
	doc, err := nmstate.Parse("nmstate.yaml", []byte(nmstateBootDoc))
	if err != nil {
		panic(err)
	}
	files := map[string][]byte{}
	for _, kf := range doc.Keyfiles() {
		files[kf.Name] = kf.Data
	}
	prepared, _, err := coreos.PrepareLiveIgnition(bipBootInput, coreos.LiveIgnitionOptions{
		Installation: coreos.Installation{Disk: bipBootDisk, CopyNetwork: true}, Hostname: nmstateBootHostname,
	})
	if err != nil {
		panic(err)
	}
	if info, err := coreos.InspectIgnition(prepared); err != nil || info.Hostname != nmstateBootHostname ||
		info.InstalledHostname != nmstateBootHostname {
		panic(fmt.Sprintf("the prepared live config lacks the hostname: %+v, %v", info, err))
	}
	return files, prepared
}

func nmstateBuildImage(t *testing.T, pristine, dir string) string {
	writeFile(t, filepath.Join(dir, "nmstate.yaml"), nmstateBootDoc)
	config := writeFile(t, filepath.Join(dir, "sno.yaml"), "coreOSInstallation:\n  installationDisk: "+bipBootDisk+
		"\nnetwork:\n  nmstate: [nmstate.yaml]\nhostname: "+nmstateBootHostname+"\n")
	return bipBuild(t, pristine, dir, "--config", config)
}

// bipBootDisk is where the booted node would install itself.
const bipBootDisk = "/dev/disk/by-id/virtio-sno-boot"

// bipBootInput is a generated bootstrap-in-place config; bipBootPrepared is the live config
// that build must embed for it, made here through the library, so that the boot also checks
// that the binary embeds exactly what the preparation produces.
var bipBootInput, bipBootPrepared = prepareBIPForBoot()

func prepareBIPForBoot() (input, prepared []byte) {
	input, err := bipgen.Generate(bipgen.Options{Seed: 3})
	if err != nil {
		panic(err)
	}
	prepared, _, err = coreos.PrepareLiveIgnition(input, coreos.LiveIgnitionOptions{
		Installation: coreos.Installation{Disk: bipBootDisk},
	})
	if err != nil {
		panic(err)
	}
	return input, prepared
}

func bipBuildImage(t *testing.T, pristine, dir string) string {
	cfg := writeFile(t, filepath.Join(dir, "sno.yaml"), "coreOSInstallation:\n  installationDisk: "+bipBootDisk+"\n")
	return bipBuild(t, pristine, dir, "--config", cfg)
}

// bipBuild runs `sno-iso build` on bipBootInput with more options.
func bipBuild(t *testing.T, pristine, dir string, options ...string) string {
	ign := filepath.Join(dir, "bootstrap-in-place-for-live-iso.ign")
	if err := os.WriteFile(ign, bipBootInput, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "sno.iso")
	mustSno(t, nil, append([]string{"build", "--iso", pristine, "--ignition", ign, "-o", out}, options...)...)
	return out
}

const bootIPKarg = "ip=192.0.2.10::192.0.2.1:255.255.255.0:sno:eno1:none"

func TestBoot(t *testing.T) {
	testenv.Long(t, "boot tests take minutes")
	requireBootTools(t)
	for _, bc := range bootCases {
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			iso := bc.image(t, lookalikeISO(t), t.TempDir())
			for _, mode := range bc.modes {
				t.Run(mode, func(t *testing.T) {
					t.Parallel()
					bootAndCheck(t, mode, iso, bc.want)
				})
			}
		})
	}
}

// bootTools are the programs and files that scripts/mkliveiso and scripts/boot
// use, with the Debian package of each.
var bootTools = []struct{ name, pkg string }{
	{"qemu-system-x86_64", "qemu-system-x86"},
	{"qemu-img", "qemu-utils"},
	{"qemu-io", "qemu-utils"},
	{"xorriso", "xorriso"},
	{"/usr/share/OVMF/OVMF_CODE_4M.fd", "ovmf"},
	{"/bin/busybox", "busybox-static"},
	{"/usr/lib/ISOLINUX/isolinux.bin", "isolinux"},
	{"/usr/lib/syslinux/modules/bios/ldlinux.c32", "syslinux-common"},
	{"grub-mkimage", "grub-common"},
	{"/usr/lib/grub/x86_64-efi/linux.mod", "grub-efi-amd64-bin"},
	{"mkfs.fat", "dosfstools"},
	{"mcopy", "mtools"},
	{"cpio", "cpio"},
	{"xz", "xz-utils"},
	{"dpkg-deb", "dpkg"},
	{"apt-get", "apt"},
}

func requireBootTools(t *testing.T) {
	for _, tool := range bootTools {
		var err error
		if filepath.IsAbs(tool.name) {
			_, err = os.Stat(tool.name)
		} else {
			_, err = exec.LookPath(tool.name)
		}
		if err != nil {
			testenv.Missing(t, "boot tests need %s (Debian package %s; `make test` as root installs it)", tool.name, tool.pkg)
		}
	}
}

func repoRoot(t testing.TB) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var (
	lookalikeOnce sync.Once
	lookalikePath string
	lookalikeErr  error
)

// lookalikeISO builds the pristine look-alike once per test run, with the
// miniso.dat packed by this tree's sno-iso. It is reproducible, so it goes to
// the same place in .cache every time.
func lookalikeISO(t *testing.T) string {
	t.Helper()
	sno := snoISO(t)
	lookalikeOnce.Do(func() {
		root := repoRoot(t)
		dir := filepath.Join(root, ".cache", "boot-test")
		if lookalikeErr = os.MkdirAll(dir, 0o755); lookalikeErr != nil {
			return
		}
		lookalikePath = filepath.Join(dir, "rhcos-lookalike.iso")
		cmd := exec.Command(filepath.Join(root, "scripts", "mkliveiso"), lookalikePath)
		cmd.Env = append(os.Environ(), "SNO_ISO="+sno)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			lookalikeErr = fmt.Errorf("scripts/mkliveiso: %v\n%s", err, out)
			return
		}
		t.Logf("scripts/mkliveiso built %s in %.1fs", lookalikePath, time.Since(start).Seconds())
	})
	if lookalikeErr != nil {
		t.Fatal(lookalikeErr)
	}
	return lookalikePath
}

func pristineImage(_ *testing.T, pristine, _ string) string { return pristine }

// snoISOEmbedImage embeds config with `sno-iso ignition embed`.
func snoISOEmbedImage(config []byte) func(t *testing.T, pristine, dir string) string {
	return func(t *testing.T, pristine, dir string) string {
		configPath := filepath.Join(dir, "config.ign")
		if err := os.WriteFile(configPath, config, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "embedded.iso")
		mustSno(t, nil, "ignition", "embed", "-i", configPath, "-o", out, pristine)
		return out
	}
}

// snoISOBuildImage runs `sno-iso build` with config (embedded unchanged), a live karg and
// a network keyfile.
func snoISOBuildImage(config []byte, liveKarg string, keyfile []byte) func(t *testing.T, pristine, dir string) string {
	return func(t *testing.T, pristine, dir string) string {
		configPath := filepath.Join(dir, "config.ign")
		keyfilePath := filepath.Join(dir, "eno1.nmconnection")
		for path, data := range map[string][]byte{configPath: config, keyfilePath: keyfile} {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(dir, "built.iso")
		mustSno(t, nil, "build", "--iso", pristine, "--ignition", configPath, "--allow-any-ignition",
			"--live-karg-append", liveKarg, "--network-keyfile", keyfilePath, "-o", out)
		return out
	}
}

// ddPayloadImage writes config.ign (and a network keyfile, if any) as a newc
// cpio compressed by xz with the given integrity check into the Ignition area
// of a copy of the pristine ISO, the way dd would.
func ddPayloadImage(check string, config, keyfile []byte) func(t *testing.T, pristine, dir string) string {
	return func(t *testing.T, pristine, dir string) string {
		files := map[string][]byte{"config.ign": config}
		if keyfile != nil {
			files["etc/coreos-firstboot-network/eno1.nmconnection"] = keyfile
		}
		payload := xzNewc(t, check, files)
		offset, length := ignitionArea(t, pristine)
		if int64(len(payload)) > length {
			t.Fatalf("payload of %d bytes does not fit the %d-byte Ignition area", len(payload), length)
		}
		out := filepath.Join(dir, "dd-"+check+".iso")
		copyFile(t, pristine, out)
		f, err := os.OpenFile(out, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(payload, offset); err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// xzNewc archives files with GNU cpio (newc) and compresses them with xz-utils.
func xzNewc(t *testing.T, check string, files map[string][]byte) []byte {
	t.Helper()
	src := t.TempDir()
	for name, data := range files {
		path := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "-c", `set -o pipefail; find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | xz -9 --check="$1"`, "xzNewc", check)
	cmd.Dir = src
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	payload, err := cmd.Output()
	if err != nil {
		t.Fatalf("cpio | xz --check=%s: %v\n%s", check, err, stderr.Bytes())
	}
	return payload
}

// ignitionArea finds the Ignition embed area as coreos-installer does (spec
// section 1.2), with xorriso rather than sno-iso's own reader: the file that
// coreos/igninfo.json names, from its offset, for its length or to its end.
func ignitionArea(t *testing.T, iso string) (offset, length int64) {
	t.Helper()
	infoPath := filepath.Join(t.TempDir(), "igninfo.json")
	if out, err := exec.Command("xorriso", "-osirrox", "on", "-indev", iso,
		"-extract", "/coreos/igninfo.json", infoPath).CombinedOutput(); err != nil {
		t.Fatalf("extracting coreos/igninfo.json from %s: %v\n%s", iso, err, out)
	}
	raw, err := os.ReadFile(infoPath)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		File   string `json:"file"`
		Offset *int64 `json:"offset"`
		Length *int64 `json:"length"`
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatalf("coreos/igninfo.json of %s: %v", iso, err)
	}
	start, size := fileExtent(t, iso, "/"+info.File)
	if info.Offset != nil {
		offset = *info.Offset
	}
	length = size - offset
	if info.Length != nil {
		length = *info.Length
	}
	return start + offset, length
}

var reportLBA = regexp.MustCompile(`(?m)^File data lba:\s*\d+\s*,\s*(\d+)\s*,\s*\d+\s*,\s*(\d+)\s*,`)

// fileExtent returns where the data of path (a Rock Ridge path) lies in iso.
func fileExtent(t *testing.T, iso, path string) (offset, size int64) {
	t.Helper()
	out, err := exec.Command("xorriso", "-indev", iso, "-find", path, "-exec", "report_lba").CombinedOutput()
	m := reportLBA.FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("xorriso cannot locate %s in %s: %v\n%s", path, iso, err, out)
	}
	lba, _ := strconv.ParseInt(string(m[1]), 10, 64)
	size, _ = strconv.ParseInt(string(m[2]), 10, 64)
	return lba * 2048, size
}

// vmSlots keeps TCG virtual machines to one per core, whatever -parallel says.
var vmSlots = make(chan struct{}, runtime.NumCPU())

// bootAndCheck boots iso in mode with scripts/boot and checks the report.
func bootAndCheck(t *testing.T, mode, iso string, want bootWant) {
	args := []string{"--timeout", "180", "--log", filepath.Join(t.TempDir(), "serial.log")}
	for _, k := range want.kargs {
		args = append(args, "--expect-karg", k)
	}
	if want.ignition == nil {
		args = append(args, "--expect-ignition-sha256", "none")
	} else {
		args = append(args, "--expect-ignition-sha256", bytesSHA(want.ignition))
	}
	if len(want.network) == 0 {
		args = append(args, "--expect-network", "none")
	}
	names := make([]string, 0, len(want.network))
	for name := range want.network {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		args = append(args, "--expect-network", name+"="+bytesSHA(want.network[name]))
	}
	args = append(args, mode, iso)

	before := fileSHA(t, iso)
	vmSlots <- struct{}{}
	start := time.Now()
	out, err := exec.Command(filepath.Join(repoRoot(t), "scripts", "boot"), args...).CombinedOutput()
	elapsed := time.Since(start)
	<-vmSlots
	t.Logf("booted %s in %.1fs:\n%s", mode, elapsed.Seconds(), out)
	if after := fileSHA(t, iso); after != before {
		t.Errorf("%s: booting changed the image (SHA-256 %s, then %s)", mode, before, after)
	}

	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running scripts/boot: %v", err)
	}
	if !want.kernelRejects {
		if err != nil {
			t.Errorf("%s: the report does not match (scripts/boot exit %d); see the log above", mode, exit.ExitCode())
		}
		return
	}
	// The negative control: a complete report in which only the config is missing,
	// because the kernel could not decompress the archive.
	if err == nil || exit.ExitCode() != 1 {
		t.Fatalf("%s: scripts/boot accepted an archive the kernel should refuse (err %v)", mode, err)
	}
	text := string(out)
	if n := strings.Count(text, "MISMATCH "); n != 1 || !strings.Contains(text, "MISMATCH config.ign:") {
		t.Errorf("%s: want exactly one mismatch, on config.ign; got %d", mode, n)
	}
	for _, seen := range []string{"seen: end", "Initramfs unpacking failed"} {
		if !strings.Contains(text, seen) {
			t.Errorf("%s: the report lacks %q", mode, seen)
		}
	}
}
