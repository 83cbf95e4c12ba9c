package main

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/node"
	"github.com/urfave/cli/v2"
)

// wantUsageError asserts exit 2 (a command line that cannot run) with exactly the line
// "Error: <want>" on stderr.
func wantUsageError(t *testing.T, r result, want string) {
	t.Helper()
	if r.code != 2 {
		t.Errorf("exit %d, want 2 (usage); stderr %q", r.code, r.stderr)
	}
	if got := strings.TrimSuffix(string(r.stderr), "\n"); got != "Error: "+want {
		t.Errorf("stderr %q, want %q", got, "Error: "+want)
	}
}

// TestMistypedNamesSuggestTheNearest: a mistyped command, subcommand or option names the one
// the user most likely meant; a name near nothing points to --help instead.
func TestMistypedNamesSuggestTheNearest(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bulid"}, `unknown command "bulid"; did you mean "build"?`},
		{[]string{"ignition", "embedd", "rhcos.iso"}, `unknown command "embedd"; did you mean "embed"?`},
		{[]string{"pxe", "ignition", "wrapp"}, `unknown command "wrapp"; did you mean "wrap"?`},
		{[]string{"build", "--ignitoin", "x.ign"}, `unknown option --ignitoin; did you mean --ignition?`},
		{[]string{"serve", "urls", "--nodse", "nodes"}, `unknown option --nodse; did you mean --nodes?`},
		{[]string{"--verison"}, `unknown option --verison; did you mean --version?`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"; run sno-iso --help to list the commands`},
		{[]string{"serve", "url", "--nodes", "nodes"}, `unknown command "url"; did you mean "urls"?`},
		{[]string{"serve", "rotate"}, `unknown command "rotate"; did you mean "rotate-secret"?`},
		{[]string{"serve", "--iso", "rhcos.iso", "--nodes", "nodes", "start"},
			`unknown command "start"; serve takes no arguments: the ISO goes in --iso and the nodes directory in --nodes (see --help)`},
		{[]string{"ignition", "embed", "-z", "rhcos.iso"}, `unknown option -z; run sno-iso ignition embed --help to list the options`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			wantUsageError(t, sno(t, nil, c.args...), c.want)
		})
	}
}

// TestHelpCommand: `sno-iso help CMD [SUBCMD]` prints what `CMD [SUBCMD] --help` prints, and
// a mistyped name in it is an unknown command.
func TestHelpCommand(t *testing.T) {
	for _, path := range [][]string{{}, {"build"}, {"ignition"}, {"ignition", "embed"}, {"pxe", "ignition", "wrap"}} {
		help := mustSno(t, nil, append([]string{"help"}, path...)...)
		want := mustSno(t, nil, append(path, "--help")...)
		if string(help) != string(want) {
			t.Errorf("help %s printed\n%s\nwant\n%s", strings.Join(path, " "), help, want)
		}
		if name := strings.Join(append([]string{"sno-iso"}, path...), " "); !strings.Contains(string(help), name) {
			t.Errorf("help %s does not name %q:\n%s", strings.Join(path, " "), name, help)
		}
	}
	wantUsageError(t, sno(t, nil, "help", "bulid"), `unknown command "bulid"; did you mean "build"?`)
	wantUsageError(t, sno(t, nil, "help", "ignition", "embedd"), `unknown command "embedd"; did you mean "embed"?`)
}

// TestDestDeviceIsInstallationDisk: coreos-installer's --dest-device names the installation
// disk of build and pxe build.
func TestDestDeviceIsInstallationDisk(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 150000)
	const disk = "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"
	out := filepath.Join(dir, "sno.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--dest-device", disk, "-o", out)
	var report node.Report
	if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", out), &report); err != nil {
		t.Fatal(err)
	}
	if report.Installation == nil || report.Installation.Disk != disk {
		t.Errorf("build --dest-device %s installs to %+v", disk, report.Installation)
	}
	pxeDir := filepath.Join(dir, "pxe")
	mustSno(t, nil, "pxe", "build", "--iso", withInitramfs(t, stockLiveInitramfs(t)), "--ignition", ign, "--dest-device", disk, "-o", pxeDir)
	wrapped, err := os.ReadFile(filepath.Join(pxeDir, "initrd.img"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := coreos.InspectIgnition(mustSno(t, wrapped, "pxe", "ignition", "unwrap"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Installation.Disk != disk {
		t.Errorf("pxe build --dest-device %s installs to %s", disk, info.Installation.Disk)
	}
}

// commandPaths lists every command a user can ask --help of, hidden ones included, as
// argument lists; the drop-in's stand-ins for coreos-installer commands it does not provide
// have no help.
func commandPaths(parent []string, commands []*cli.Command) [][]string {
	var paths [][]string
	for _, c := range commands {
		if c.HideHelp {
			continue
		}
		path := append(slices.Clone(parent), c.Name)
		paths = append(append(paths, path), commandPaths(path, c.Subcommands)...)
	}
	return paths
}

// TestHelpFitsHundredColumns: every --help reads in a terminal of 100 columns, and prints
// no default that says nothing (false for an option that is off unless given) or says it
// the long way (1m0s), and no option whose value is called just "value".
func TestHelpFitsHundredColumns(t *testing.T) {
	wantHelpFits(t, snoISO(t), newApp(nil, io.Discard, io.Discard))
}

// TestDropInHelpFitsHundredColumns: so does every --help of the coreos-installer drop-in.
func TestDropInHelpFitsHundredColumns(t *testing.T) {
	wantHelpFits(t, dropInBinary(t), newDropInApp(nil, io.Discard, io.Discard))
}

// wantHelpFits checks the --help of bin and of each command of app, which bin runs.
func wantHelpFits(t *testing.T, bin string, app *cli.App) {
	paths := append([][]string{{}}, commandPaths(nil, app.Commands)...)
	longDuration := regexp.MustCompile(`\(default: [^)]*[0-9][hm]0s\)`)
	unnamedValue := regexp.MustCompile(`(?m)^\s+-[-a-z0-9]* value\b`)
	for _, path := range paths {
		name := strings.Join(append([]string{app.Name}, path...), " ")
		help := mustRun(t, bin, nil, append(path, "--help")...)
		if !bytes.Contains(help, []byte(name)) {
			t.Errorf("%s --help does not name %q:\n%s", name, name, help)
		}
		if bytes.Contains(help, []byte("(default: false)")) || longDuration.Match(help) || unnamedValue.Match(help) {
			t.Errorf("%s --help:\n%s", name, help)
		}
		for i, line := range strings.Split(string(help), "\n") {
			if n := utf8.RuneCountInString(line); n > helpWidth {
				t.Errorf("%s --help line %d has %d columns: %q", name, i+1, n, line)
			}
		}
	}
}

// TestHelpShowsTheRealDefaults: the node options left out keep sno.yaml's settings, and
// --copy-network follows the network keyfiles; --help says so rather than "false".
func TestHelpShowsTheRealDefaults(t *testing.T) {
	// Words as they read, wherever the lines break.
	help := strings.Join(strings.Fields(string(mustSno(t, nil, "help", "build"))), " ")
	for _, want := range []string{
		"(default: sno.yaml's copyNetwork, else true with network keyfiles and false without)",
		"(default: sno.yaml's wipeDisk, else false)",
		"(default: sno.yaml's rebootDelay, else 1m)",
		"(default: true when sno.yaml's output.kind is minimal)",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("build --help lacks %q:\n%s", want, help)
		}
	}
	if help := string(mustSno(t, nil, "help", "serve")); !strings.Contains(help, "(default: 1h)") {
		t.Errorf("serve --help does not show --rotation-grace's default as 1h:\n%s", help)
	}
}

// TestBadValuesSayWhatToGive: a flag value that does not parse, an address without a host, a
// missing nodes directory, standard input for a node's file and a device as the output
// file each say what to give instead.
func TestBadValuesSayWhatToGive(t *testing.T) {
	dir := t.TempDir()
	ign := writeFile(t, filepath.Join(dir, "config.ign"), "{}")
	iso := filepath.Join(dir, "rhcos.iso") // never read: the command line is refused first
	nodes := t.TempDir()
	missing := filepath.Join(dir, "nosuchdir")
	noNodes := "the nodes directory " + missing + " does not exist; --nodes names a directory with one subdirectory per node, " +
		"holding its bootstrap-in-place-for-live-iso.ign and, optionally, its sno.yaml"
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"build", "--iso", iso, "--ignition", ign, "--reboot-delay", "5"}, 2,
			`--reboot-delay "5" is not a duration: give it a unit, e.g. 5m (or 5s, 5h)`},
		{[]string{"build", "--iso", iso, "--ignition", ign, "--reboot-delay", "soon"}, 2,
			`--reboot-delay "soon" is not a duration: a number with a unit, such as 30s, 5m or 1h`},
		{[]string{"build", "--iso", iso, "--ignition", ign, "--installation-disk", "/dev/sda;rm"}, 2,
			`--installation-disk: installation disk "/dev/sda;rm": character ';' at offset 8 is not allowed (allowed: letters, digits and / . _ : + @ -)`},
		{[]string{"pxe", "build", "--iso", iso, "--ignition", ign, "--dest-device", "", "-o", "pxe"}, 2,
			`--installation-disk: installation disk is empty`},
		{[]string{"build", "--iso", iso, "--ignition", ign, "--reboot-delay", "90s"}, 2,
			`--reboot-delay 1m30s is not a whole number of minutes (the reboot is scheduled with shutdown -r +MINUTES); use e.g. 2m`},
		{[]string{"pxe", "build", "--iso", iso, "--ignition", ign, "--reboot-delay=-1m", "-o", "pxe"}, 2,
			`--reboot-delay -1m0s is negative`},
		{[]string{"build", "--iso", iso, "--ignition", ign, "--copy-network=maybe"}, 2,
			`--copy-network "maybe" is not true or false: give --copy-network to turn it on, --copy-network=false to turn it off`},
		{[]string{"serve", "--iso", iso, "--nodes", nodes, "--max-concurrent", "many"}, 2, `--max-concurrent "many" is not a whole number`},
		{[]string{"serve", "--iso", iso, "--nodes", nodes, "--listen", "8091"}, 2,
			`--listen "8091" is not HOST:PORT: write :8091 to listen on every address, or 127.0.0.1:8091 for this machine only`},
		{[]string{"serve", "--iso", iso, "--nodes", nodes, "--listen", "127.0.0.1:0", "--admin-listen", "9091"}, 2,
			`--admin-listen "9091" is not HOST:PORT: write :9091 to listen on every address, or 127.0.0.1:9091 for this machine only`},
		{[]string{"serve", "--iso", iso, "--nodes", missing}, 1, noNodes},
		{[]string{"serve", "urls", "--nodes", missing}, 1, noNodes},
		{[]string{"build", "--iso", iso, "--ignition", "-"}, 2,
			"--ignition -: sno-iso build reads files, not standard input; save it to a file and give its path"},
		{[]string{"pxe", "build", "--iso", iso, "--ignition", ign, "--network-keyfile", "-", "-o", dir}, 2,
			"--network-keyfile -: sno-iso pxe build reads files, not standard input; save it to a file and give its path"},
	} {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			r := sno(t, nil, c.args...)
			if got := strings.TrimSuffix(string(r.stderr), "\n"); r.code != c.code || got != "Error: "+c.want {
				t.Errorf("sno-iso %q: exit %d, stderr %q; want exit %d, %q", c.args, r.code, got, c.code, "Error: "+c.want)
			}
		})
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("serve created the missing nodes directory %s", missing)
	}
}

// TestListenInUseSaysWhatToDo: a port another program holds is named, with what to do.
func TestListenInUseSaysWhatToDo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	r := sno(t, nil, "serve", "--iso", filepath.Join(t.TempDir(), "rhcos.iso"), "--nodes", t.TempDir(), "--listen", addr)
	wantFailure(t, r, "--listen "+addr+": ", "address already in use; another program (another sno-iso serve?) listens there: stop it, or pick another port")
}

// TestDeviceOutputSaysStream: a device named as the output file (a USB stick; /dev/null here)
// is refused before anything is read, with the command line that writes to it.
func TestDeviceOutputSaysStream(t *testing.T) {
	if info, err := os.Stat(os.DevNull); err != nil || info.Mode()&fs.ModeDevice == 0 {
		testenv.Missing(t, "%s is not a device here", os.DevNull)
	}
	dir := t.TempDir()
	iso := filepath.Join(dir, "rhcos.iso") // never read
	ign := writeFile(t, filepath.Join(dir, "config.ign"), "{}")
	stream := "-o - > " + os.DevNull
	for _, c := range []struct {
		args   []string
		stream string
	}{
		{[]string{"build", "--iso", iso, "--ignition", ign, "-o", os.DevNull}, stream},
		{[]string{"kargs", "modify", "-a", "console=ttyS0", "-o", os.DevNull, iso}, stream},
		{[]string{"reset", "-o", os.DevNull, iso}, stream},
		{[]string{"minimal", iso, os.DevNull}, "sno-iso minimal " + iso + " - > " + os.DevNull},
	} {
		wantUsageError(t, sno(t, nil, c.args...), os.DevNull+" is a device, not a file: write the image to it as a stream, with "+c.stream)
	}
}

// A mistyped device name is refused, not created as a file in /dev (memory) and reported
// as written.
func TestMissingDeviceOutputRefused(t *testing.T) {
	if info, err := os.Stat("/dev"); err != nil || !info.IsDir() {
		testenv.Missing(t, "no /dev here")
	}
	missing := "/dev/sno-iso-test-no-such-device"
	t.Cleanup(func() { os.Remove(missing) })
	dir := t.TempDir()
	iso := filepath.Join(dir, "rhcos.iso") // never read
	ign := writeFile(t, filepath.Join(dir, "config.ign"), `{"ignition":{"version":"3.2.0"}}`)
	for _, c := range []struct {
		args   []string
		stream string
	}{
		{[]string{"build", "--iso", iso, "--ignition", ign, "-o", missing}, "-o -"},
		{[]string{"ignition", "embed", "-i", ign, "-o", missing, iso}, "-o -"},
		{[]string{"minimal", iso, missing}, "sno-iso minimal " + iso + " -"},
	} {
		wantUsageError(t, sno(t, nil, c.args...), missing+" does not exist, and sno-iso does not create files in /dev: check the device's name (lsblk lists them) and write the image to it as a stream, with "+c.stream+" > /dev/DEVICE")
		if _, err := os.Lstat(missing); err == nil {
			t.Fatalf("sno-iso %v created %s", c.args, missing)
		}
	}
}

// TestRootfsURLMustBeHTTP: a rootfs URL the live system cannot fetch is refused, from the
// flag (usage) and from sno.yaml (its line), before anything is written.
func TestRootfsURLMustBeHTTP(t *testing.T) {
	dir := t.TempDir()
	iso := filepath.Join(dir, "rhcos.iso") // never read
	ign := writeFile(t, filepath.Join(dir, "config.ign"), "{}")
	advice := "; give the http(s) URL at which you serve the ISO's images/pxeboot/rootfs.img (sno-iso minimal --output-rootfs writes it)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "--iso", iso, "--ignition", ign, "--minimal", "--rootfs-url", "192.0.2.1/rootfs.img"},
			`--rootfs-url: rootfs URL "192.0.2.1/rootfs.img" is not absolute: write http://192.0.2.1/rootfs.img (or https://)` + advice},
		{[]string{"minimal", "--rootfs-url", "ftp://x/rootfs.img", iso, filepath.Join(dir, "out.iso")},
			`--rootfs-url: rootfs URL "ftp://x/rootfs.img" is ftp: the live system fetches its root file system only over http:// or https://` + advice},
	} {
		wantUsageError(t, sno(t, nil, c.args...), c.want)
	}
	cfg := writeFile(t, filepath.Join(dir, "sno.yaml"), "coreOSInstallation:\n  installationDisk: /dev/vda\noutput:\n  kind: minimal\n  rootfsURL: 192.0.2.1/rootfs.img\n")
	r := sno(t, nil, "build", "--iso", fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), "--ignition", ign, "--config", cfg, "-o", filepath.Join(dir, "out.iso"))
	wantFailure(t, r, cfg+`:5:14: output.rootfsURL: rootfs URL "192.0.2.1/rootfs.img" is not absolute: write http://192.0.2.1/rootfs.img`)
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"config.ign", "sno.yaml"}) {
		t.Errorf("the refused commands left %q", got)
	}
}

// TestMinimalWithoutRootfsURLWarns: build --minimal without a rootfs URL makes the ISO, but
// says that it cannot boot unaided, in a warning and in its success line.
func TestMinimalWithoutRootfsURLWarns(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 150000)
	out := filepath.Join(dir, "minimal.iso")
	r := sno(t, nil, "build", "--iso", iso, "--ignition", ign, "--installation-disk", "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3", "--minimal", "-o", out)
	if r.code != 0 {
		t.Fatalf("build --minimal: exit %d: %s", r.code, r.stderr)
	}
	want := "Warning: the minimal ISO has no root file system and no URL to fetch it from: it cannot boot unaided; " +
		"set output.rootfsURL (or --rootfs-url), or add coreos.live.rootfs_url= to its kernel arguments at boot, or boot its rootfs over PXE\n" +
		"Wrote " + out + ", a minimal ISO without a rootfs URL; it boots only with coreos.live.rootfs_url= added (sno-iso kargs modify -a) or over PXE.\n"
	if string(r.stderr) != want {
		t.Errorf("build --minimal said\n%s\nwant\n%s", r.stderr, want)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}

// TestSplitKargRefused: build refuses sno.yaml when its flow list cut a console argument in
// two, naming the file and line and the quoted form that keeps it whole, and writes nothing.
func TestSplitKargRefused(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 150000)
	cfg := writeFile(t, filepath.Join(dir, "sno.yaml"),
		"coreOSInstallation:\n  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3\n  appendKargs: [console=ttyS0,115200n8]\n")
	out := filepath.Join(dir, "sno.iso")
	r := sno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", out)
	if r.code != 1 {
		t.Fatalf("build: exit %d, want 1 for a kernel argument split by the YAML flow list: %s", r.code, r.stderr)
	}
	want := cfg + `:3:31: appendKargs[1] "115200n8" looks like the end of "console=ttyS0,115200n8", ` +
		`which the YAML flow list split at its comma into two kernel arguments; quote it to keep it one: appendKargs: ["console=ttyS0,115200n8"]`
	if !strings.Contains(string(r.stderr), want) {
		t.Errorf("build said\n%s\nwant it to contain\n%s", r.stderr, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("build left %s after refusing its sno.yaml: %v", out, err)
	}
}

// TestDiskWarningNamesItsSource: the warning about an unstable disk name names where the
// disk was set: sno.yaml, install-config.yaml or the flag, not the Ignition config.
func TestDiskWarningNamesItsSource(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 150000)
	cfg := writeFile(t, filepath.Join(dir, "sno.yaml"), "coreOSInstallation:\n  installationDisk: /dev/sda\n")
	installConfig := writeFile(t, filepath.Join(dir, "install-config.yaml"), "apiVersion: v1\nbootstrapInPlace:\n  installationDisk: /dev/sda\n")
	const text = "installation disk /dev/sda is a kernel name, which can point at another disk after a reboot or a hardware change; " +
		"prefer a stable name from /dev/disk/by-id or /dev/disk/by-path\n"
	for _, c := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"sno.yaml", []string{"--config", cfg}, "Warning: " + cfg + ": installationDisk: " + text},
		{"install-config.yaml", []string{"--install-config", installConfig}, "Warning: " + installConfig + ": installationDisk: " + text},
		{"flag", []string{"--config", cfg, "--installation-disk", "/dev/sda"}, "Warning: --installation-disk: " + text},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sno.iso")
			r := sno(t, nil, append([]string{"build", "--iso", iso, "--ignition", ign, "-o", out}, c.flags...)...)
			if r.code != 0 {
				t.Fatalf("build: exit %d: %s", r.code, r.stderr)
			}
			if !strings.HasPrefix(string(r.stderr), c.want) {
				t.Errorf("build said\n%s\nwant it to start with\n%s", r.stderr, c.want)
			}
			if strings.Contains(string(r.stderr), ign) {
				t.Errorf("the warning names the Ignition config, which did not set the disk:\n%s", r.stderr)
			}
		})
	}
}

// TestInspectShowsWipeAndRebootDelay: inspect reports the wipe and the reboot delay of the
// embedded installation, in text and JSON; what build was not told comes from sno.yaml, or
// is the default that --help prints (no wipe, 1m), and network keyfiles turn on
// --copy-network as --help says.
func TestInspectShowsWipeAndRebootDelay(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	dir := t.TempDir()
	ign := bipConfig(t, dir, 150000)
	const disk = "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"
	cfg := writeFile(t, filepath.Join(dir, "sno.yaml"), "coreOSInstallation:\n  installationDisk: "+disk+"\n  wipeDisk: true\n  rebootDelay: 3m\n")
	keyfile := writeFile(t, filepath.Join(dir, "eno1.nmconnection"), "[connection]\nid=eno1\ntype=ethernet\n")
	for _, c := range []struct {
		name    string
		flags   []string
		wipe    bool
		minutes int
		text    []string
		copyNet bool
	}{
		{"sno.yaml", []string{"--config", cfg}, true, 3,
			[]string{"               wipe disk: yes, holders released and signatures wiped first\n", "               reboot delay: 3m after installing\n"}, false},
		{"defaults", []string{"--installation-disk", disk, "--network-keyfile", keyfile}, false, 1,
			[]string{"               wipe disk: no\n", "               reboot delay: 1m after installing\n"}, true},
		{"flags over sno.yaml", []string{"--config", cfg, "--wipe-disk=false", "--reboot-delay", "0s"}, false, 0,
			[]string{"               wipe disk: no\n", "               reboot delay: none, reboots right after installing\n"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sno.iso")
			mustSno(t, nil, append([]string{"build", "--iso", iso, "--ignition", ign, "-o", out}, c.flags...)...)
			var report node.Report
			if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", out), &report); err != nil {
				t.Fatal(err)
			}
			in := report.Installation
			if in == nil || in.WipeDisk != c.wipe || in.RebootDelayMinutes == nil || *in.RebootDelayMinutes != c.minutes {
				t.Fatalf("inspect --json installation = %+v, want wipeDisk %t and rebootDelayMinutes %d", in, c.wipe, c.minutes)
			}
			if got := slices.Contains(in.InstallerArgs, "--copy-network"); got != c.copyNet {
				t.Errorf("installer args %q: --copy-network %t, want %t", in.InstallerArgs, got, c.copyNet)
			}
			text := string(mustSno(t, nil, "inspect", out))
			for _, want := range c.text {
				if !strings.Contains(text, "Installation:  to "+disk+" by coreos-installer ") || !strings.Contains(text, want) {
					t.Errorf("inspect says\n%s\nwant the installation with %q", text, want)
				}
			}
		})
	}
}

// /dev holds devices, except /dev/shm, a tmpfs where files are written.
func TestInDevDir(t *testing.T) {
	for path, want := range map[string]bool{
		"/dev/sdz": true, "/dev/disk/by-id/usb-x": true, "/dev/shm/sno.iso": false,
		"/tmp/sno.iso": false, "/devices/x": false, "dev/sdz": false,
	} {
		if got := inDevDir(path); got != want {
			t.Errorf("inDevDir(%q) = %v, want %v", path, got, want)
		}
	}
}
