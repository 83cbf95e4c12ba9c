package coreos

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConfig(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "sno.yaml"), `# sno-iso settings
coreOSInstallation:
  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3
  copyNetwork: true
  appendKargs:
    - console=ttyS0,115200n8
    - rd.neednet=1
  deleteKargs: [nomodeset]
  wipeDisk: true
  rebootDelay: 3m
`)
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Installation{
		Disk: "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3", CopyNetwork: true,
		AppendKargs: []string{"console=ttyS0,115200n8", "rd.neednet=1"}, DeleteKargs: []string{"nomodeset"},
		WipeDisk: true, RebootDelay: ptr(3 * time.Minute),
	}
	if !reflect.DeepEqual(cfg.Installation, want) {
		t.Errorf("got %+v\nwant %+v", cfg.Installation, want)
	}
}

func TestLoadConfigLiveKargsAndNetwork(t *testing.T) {
	dir := t.TempDir()
	cfg, err := LoadConfig(writeFile(t, filepath.Join(dir, "sno.yaml"), `coreOSInstallation:
  installationDisk: /dev/vda
liveKargs:
  append: [ip=192.0.2.10::192.0.2.1:255.255.255.0:sno:eno1:none, nameserver=192.0.2.1]
  delete:
    - mitigations=auto,nosmt
  replace: [ignition.platform.id=metal=openstack]
network:
  keyfiles: [eno1.nmconnection, /etc/sno/bond0.nmconnection]
`))
	if err != nil {
		t.Fatal(err)
	}
	want := LiveKargs{
		Append:  []string{"ip=192.0.2.10::192.0.2.1:255.255.255.0:sno:eno1:none", "nameserver=192.0.2.1"},
		Delete:  []string{"mitigations=auto,nosmt"},
		Replace: []string{"ignition.platform.id=metal=openstack"},
	}
	if !reflect.DeepEqual(cfg.LiveKargs, want) || cfg.LiveKargs.IsZero() {
		t.Errorf("liveKargs = %+v, want %+v", cfg.LiveKargs, want)
	}
	if keyfiles := []string{filepath.Join(cfg.Dir, "eno1.nmconnection"), "/etc/sno/bond0.nmconnection"}; !reflect.DeepEqual(cfg.NetworkKeyfiles, keyfiles) {
		t.Errorf("keyfiles = %q, want %q", cfg.NetworkKeyfiles, keyfiles)
	}
	if cfg.CopyNetworkSet {
		t.Error("copyNetwork reported as set by a file that does not set it")
	}
	for content, set := range map[string]bool{
		"coreOSInstallation:\n  copyNetwork: false\n": true,
		"coreOSInstallation:\n  copyNetwork: true\n":  true,
		"coreOSInstallation:\n  copyNetwork:\n":       false,
	} {
		cfg, err := ParseConfig("sno.yaml", []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.CopyNetworkSet != set {
			t.Errorf("%q: CopyNetworkSet = %t, want %t", content, cfg.CopyNetworkSet, set)
		}
	}
}

func TestLoadConfigInstallConfigName(t *testing.T) {
	dir := t.TempDir()
	cfg, err := LoadConfig(writeFile(t, filepath.Join(dir, "sno.yaml"), "bootstrapInPlace:\n  installationDisk: /dev/disk/by-path/pci-0000:00:1f.2-ata-1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Installation.Disk != "/dev/disk/by-path/pci-0000:00:1f.2-ata-1" || cfg.Installation.EffectiveRebootDelay() != time.Minute {
		t.Errorf("got %+v", cfg.Installation)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name, content, want string
	}{
		{"misspelt key", "coreOSInstallation:\n  installationDisk: /dev/sda\n  instalationDisk: /dev/sdb\n",
			`sno.yaml:3:3: unknown key "instalationDisk" in coreOSInstallation (did you mean "installationDisk"?)`},
		{"wrong case", "coreOSInstallation:\n  InstallationDisk: /dev/sda\n", `sno.yaml:2:3: unknown key "InstallationDisk" in coreOSInstallation (did you mean "installationDisk"?)`},
		{"unknown top-level key", "coreOSInstallation:\n  installationDisk: /dev/sda\nfoo: 1\n", `sno.yaml:3:1: unknown key "foo"`},
		{"unknown output kind", "coreOSInstallation:\n  installationDisk: /dev/sda\noutput: {kind: mini}\n", `sno.yaml:3:16: output.kind is "mini": use full or minimal`},
		{"rootfs URL of a full ISO", "coreOSInstallation: {}\noutput:\n  rootfsURL: http://x/rootfs\n", `sno.yaml:3:3: output.rootfsURL is only for kind: minimal`},
		{"live karg replace without new value", "coreOSInstallation: {}\nliveKargs:\n  replace: [ip=dhcp]\n", `sno.yaml:3:13: liveKargs.replace[0] "ip=dhcp": format should be KEY=OLD=NEW`},
		{"live karg with spaces", "coreOSInstallation: {}\nliveKargs:\n  append: [\"a b\"]\n", "one kernel argument per entry"},
		{"misspelt liveKargs key", "coreOSInstallation: {}\nliveKargs:\n  appends: [a]\n", `unknown key "appends" in liveKargs (did you mean "append"?)`},
		{"keyfiles not a list", "coreOSInstallation: {}\nnetwork:\n  keyfiles: eth0.nmconnection\n", "sno.yaml:3:13: network.keyfiles must be a list"},
		{"keyfile not a path", "coreOSInstallation: {}\nnetwork:\n  keyfiles: [{}]\n", "network.keyfiles[0] must be the path of a keyfile"},
		{"repeated key", "coreOSInstallation:\n  wipeDisk: true\n  wipeDisk: false\n", `sno.yaml:3:3: key "wipeDisk" is repeated`},
		{"both sections", "coreOSInstallation:\n  installationDisk: /dev/sda\nbootstrapInPlace:\n  installationDisk: /dev/sda\n", "both coreOSInstallation and bootstrapInPlace"},
		{"no section", "# nothing yet\n", "is empty"},
		{"relative disk", "coreOSInstallation:\n  installationDisk: sda\n", "sno.yaml:2:21: installationDisk: installation disk \"sda\" is not an absolute path"},
		{"disk with a quote", "coreOSInstallation:\n  installationDisk: \"/dev/sd'a\"\n", `character '\''`},
		{"disk with a newline", "coreOSInstallation:\n  installationDisk: \"/dev/sda\\nreboot\"\n", `character '\n'`},
		{"not a bool", "coreOSInstallation:\n  copyNetwork: yes\n", `sno.yaml:2:16: copyNetwork must be true or false, not "yes"`},
		{"kargs not a list", "coreOSInstallation:\n  appendKargs: ip=dhcp\n", "appendKargs must be a list"},
		{"karg with spaces", "coreOSInstallation:\n  appendKargs: [\"ip=dhcp rd.neednet=1\"]\n", "one kernel argument per entry"},
		{"delay without unit", "coreOSInstallation:\n  rebootDelay: 5\n", "write a number with a unit"},
		{"delay in seconds", "coreOSInstallation:\n  rebootDelay: 90s\n", "whole number of minutes"},
		{"not a mapping", "- /dev/sda\n", "expected a mapping"},
		{"alias", "d: &d /dev/sda\n", `unknown key "d"`},
		{"two documents", "coreOSInstallation:\n  installationDisk: /dev/sda\n---\nfoo: 1\n", "a second YAML document"},
		{"bad YAML", "coreOSInstallation:\n\tinstallationDisk: /dev/sda\n", "sno.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "sno.yaml"), c.content)
			_, err := LoadConfig(path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestConfigPathsAreRelativeToTheFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "site", "sno.yaml"), "coreOSInstallation:\n  installationDisk: /dev/vda\n")
	t.Chdir(dir)
	cfg, err := LoadConfig(filepath.Join("site", "sno.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // a later working directory must not matter
	site := mustEvalSymlinks(t, filepath.Join(dir, "site"))
	if !filepath.IsAbs(cfg.Dir) || mustEvalSymlinks(t, cfg.Dir) != site {
		t.Errorf("Dir %s, want %s", cfg.Dir, site)
	}
	if got := cfg.ResolvePath("keys/eth0.nmconnection"); got != filepath.Join(cfg.Dir, "keys", "eth0.nmconnection") {
		t.Errorf("relative path resolved to %s", got)
	}
	if got := cfg.ResolvePath("/etc/sno/eth0.nmconnection"); got != "/etc/sno/eth0.nmconnection" {
		t.Errorf("absolute path resolved to %s", got)
	}
}

func mustEvalSymlinks(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestFlagsOverrideFile(t *testing.T) {
	file := Installation{Disk: "/dev/disk/by-id/a", CopyNetwork: true, AppendKargs: []string{"a=1"}, DeleteKargs: []string{"b"}, WipeDisk: true}
	if got := (InstallationFlags{}).Override(file); !reflect.DeepEqual(got, file) {
		t.Errorf("no flags changed the file's settings: %+v", got)
	}
	got := InstallationFlags{
		Disk: "/dev/disk/by-id/b", CopyNetwork: ptr(false), AppendKargs: []string{}, WipeDisk: ptr(false), RebootDelay: ptr(0 * time.Minute),
	}.Override(file)
	want := Installation{Disk: "/dev/disk/by-id/b", AppendKargs: []string{}, DeleteKargs: []string{"b"}, RebootDelay: ptr(time.Duration(0))}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestParseInstallConfig(t *testing.T) {
	for _, c := range []struct {
		name, content, want, wantErr string
	}{
		{"canonical", "apiVersion: v1\nbaseDomain: example.com\nbootstrapInPlace:\n  installationDisk: /dev/disk/by-id/wwn-1\npullSecret: '{}'\n", "/dev/disk/by-id/wwn-1", ""},
		{"blog spelling", "BootstrapInPlace:\n  InstallationDisk: /dev/disk/by-id/wwn-2\n", "/dev/disk/by-id/wwn-2", ""},
		{"lower case", "bootstrapinplace:\n  installationdisk: /dev/sdb\n", "/dev/sdb", ""},
		{"numeric keys elsewhere", "1: x\nbootstrapInPlace:\n  installationDisk: /dev/sdc\n", "/dev/sdc", ""},
		{"missing section", "apiVersion: v1\ncontrolPlane:\n  replicas: 1\n", "", "has no bootstrapInPlace section"},
		{"null section", "bootstrapInPlace:\n", "", "has no bootstrapInPlace section"},
		{"no disk", "bootstrapInPlace: {}\n", "", "bootstrapInPlace.installationDisk is not set"},
		{"relative disk", "bootstrapInPlace:\n  installationDisk: sda\n", "", "not an absolute path"},
		{"wrong type", "bootstrapInPlace: /dev/sda\n", "", "not an install-config"},
		{"not YAML", "bootstrapInPlace: [\n", "", "install-config.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "install-config.yaml"), c.content)
			inst, err := LoadInstallConfig(path)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || inst.Disk != c.want {
				t.Errorf("disk %q, error %v; want %q", inst.Disk, err, c.want)
			}
		})
	}
}

func TestLoadConfigOutput(t *testing.T) {
	cfg, err := LoadConfig(writeFile(t, filepath.Join(t.TempDir(), "sno.yaml"), `coreOSInstallation:
  installationDisk: /dev/vda
output:
  kind: minimal
  rootfsURL: http://192.0.2.1/rhcos-live-rootfs.x86_64.img
`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Output{Kind: "minimal", RootfsURL: "http://192.0.2.1/rhcos-live-rootfs.x86_64.img"}); cfg.Output != want {
		t.Errorf("output %+v, want %+v", cfg.Output, want)
	}
}

// TestDocumentedExampleParses keeps the sno.yaml reference example of docs/building.md valid.
func TestDocumentedExampleParses(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "docs", "building.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(guide), "## sno.yaml")
	_, block, found2 := strings.Cut(section, "```yaml\n")
	example, _, found3 := strings.Cut(block, "```")
	if !found || !found2 || !found3 {
		t.Fatal("docs/building.md has no yaml example under \"## sno.yaml\"")
	}
	cfg, err := ParseConfig("docs/building.md/sno.yaml", []byte(example))
	if err != nil {
		t.Fatalf("the sno.yaml example of docs/building.md does not parse: %v", err)
	}
	if cfg.Installation.Disk == "" || !cfg.Installation.WipeDisk || len(cfg.Installation.AppendKargs) != 1 {
		t.Fatalf("the sno.yaml example of docs/building.md parsed to %+v", cfg.Installation)
	}
}

// TestSplitKargsRefused: a YAML flow list cuts console=ttyS0,115200n8 in two at its comma;
// both halves are valid arguments, so the parser refuses the file, naming the file and line
// and the quoted form, but accepts lists that are what they look like.
func TestSplitKargsRefused(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       string
	}{
		{"console in a flow list", "coreOSInstallation:\n  installationDisk: /dev/sda\n  appendKargs: [console=ttyS0,115200n8]\n",
			`sno.yaml:3:31: appendKargs[1] "115200n8" looks like the end of "console=ttyS0,115200n8", which the YAML flow list split at its comma into two kernel arguments; quote it to keep it one: appendKargs: ["console=ttyS0,115200n8"]`},
		{"live kargs", "coreOSInstallation: {}\nliveKargs:\n  append: [quiet, console=hvc0, console=ttyS0,115200n8]\n",
			`sno.yaml:3:47: liveKargs.append[3] "115200n8" looks like the end of "console=ttyS0,115200n8", which the YAML flow list split at its comma into two kernel arguments; quote it to keep it one: append: ["console=ttyS0,115200n8"]`},
		{"serial options after another argument", "coreOSInstallation:\n  appendKargs: [earlycon=ttyS0,9600n8r]\n",
			`appendKargs[1] "9600n8r" looks like the end of "earlycon=ttyS0,9600n8r"`},
		{"deleted console", "coreOSInstallation:\n  deleteKargs: [console=tty0, console=ttyS1,9600]\n",
			`deleteKargs[2] "9600" looks like the end of "console=ttyS1,9600"`},
		{"quoted", "coreOSInstallation:\n  appendKargs: [\"console=ttyS0,115200n8\"]\n", ""},
		{"block list", "coreOSInstallation:\n  appendKargs:\n    - console=ttyS0\n    - 115200n8\n", ""},
		{"flags after console", "coreOSInstallation:\n  appendKargs: [console=tty0, quiet=1, nomodeset]\n", ""},
		{"a flag right after console", "coreOSInstallation:\n  appendKargs: [console=tty0, quiet]\n", ""},
		{"nomodeset after a serial console", "coreOSInstallation:\n  appendKargs: [console=ttyS0, nomodeset]\n", ""},
		{"unrelated words", "coreOSInstallation:\n  appendKargs: [rd.break, quiet, 8250.nr_uarts=4]\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseConfig("sno.yaml", []byte(c.yaml))
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
