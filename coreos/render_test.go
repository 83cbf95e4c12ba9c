package coreos

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files")

func minutes(n int) *time.Duration {
	d := time.Duration(n) * time.Minute
	return &d
}

// renderCases are installations whose unit and script are kept as golden files.
var renderCases = []struct {
	name string
	inst Installation
}{
	{"installer-defaults", Installation{Disk: "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"}},
	{"all-options", Installation{
		Disk:        "/dev/disk/by-path/pci-0000:00:17.0-ata-1",
		CopyNetwork: true,
		AppendKargs: []string{"console=ttyS0,115200n8", `quoted="a b"`, "it's"},
		DeleteKargs: []string{"nomodeset"},
		WipeDisk:    true,
		RebootDelay: minutes(5),
	}},
	{"reboot-now", Installation{Disk: "/dev/vda", RebootDelay: minutes(0)}},
	{"install-scripts", Installation{Disk: "/dev/vda", WipeDisk: true,
		PreInstall:  []string{"/usr/local/bin/pre-install-a.sh", "/usr/local/bin/pre-install-it's"},
		PostInstall: []string{"/usr/local/bin/post-install-b"}}},
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./coreos -run Golden -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

func TestInstallToDiskUnitGolden(t *testing.T) {
	unit := RenderInstallToDiskUnit()
	checkGolden(t, "install-to-disk.service", unit)
	for _, line := range []string{
		"Requires=bootkube.service", "Wants=bootkube.service", "After=bootkube.service",
		"ConditionPathExists=!/opt/openshift/.install-to-disk.done", "WorkingDirectory=/opt/openshift",
		"ExecStart=/usr/local/bin/install-to-disk.sh", "Restart=on-failure", "RestartSec=5s",
		"RestartPreventExitStatus=" + strconv.Itoa(InstallScriptFailedStatus),
		"[Install]", "WantedBy=multi-user.target",
	} {
		if !strings.Contains(unit, line+"\n") {
			t.Errorf("unit lacks %q", line)
		}
	}
}

func TestInstallToDiskScriptGolden(t *testing.T) {
	for _, c := range renderCases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := c.inst.Validate(); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "install-to-disk-"+c.name+".sh", RenderInstallToDiskScript(c.inst, false))
		})
	}
}

func TestInstallToDiskScriptCommands(t *testing.T) {
	script := RenderInstallToDiskScript(renderCases[1].inst, false)
	for _, want := range []string{
		"until [ -f /opt/openshift/.bootkube.done ]; do",
		"coreos-installer install -i /opt/openshift/master.ign --copy-network --append-karg 'console=ttyS0,115200n8' " +
			`--append-karg 'quoted="a b"' --append-karg 'it'\''s' --delete-karg 'nomodeset' '/dev/disk/by-path/pci-0000:00:17.0-ata-1'`,
		"release_and_wipe '/dev/disk/by-path/pci-0000:00:17.0-ata-1'",
		"touch /opt/openshift/coreos-installer.done",
		`shutdown -r +5 "Bootstrap completed, server is going to reboot."`,
		"touch /opt/openshift/.install-to-disk.done",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	// The wipe must come after waiting for bootkube and before coreos-installer, and
	// both must be skipped once coreos-installer has succeeded.
	wait := strings.Index(script, "until [ -f /opt/openshift/.bootkube.done ]")
	guard := strings.Index(script, "if [ ! -f /opt/openshift/coreos-installer.done ]")
	wipe := strings.Index(script, "\trelease_and_wipe ")
	install := strings.Index(script, "\tcoreos-installer install")
	if !(wait < guard && guard < wipe && wipe < install) {
		t.Errorf("steps out of order: wait %d, guard %d, wipe %d, install %d", wait, guard, wipe, install)
	}
	if plain := RenderInstallToDiskScript(renderCases[0].inst, false); strings.Contains(plain, "wipefs") {
		t.Error("a script without wipeDisk wipes the disk")
	}
}

// TestInstallToDiskScriptSyntax runs sh -n, bash -n and shellcheck (all its checks, style
// included) on every rendered script, with and without service records.
func TestInstallToDiskScriptSyntax(t *testing.T) {
	shellcheck := testenv.Tool(t, "shellcheck", "shellcheck")
	bash := testenv.Tool(t, "bash", "bash")
	for i := range 2 * len(renderCases) {
		c, records := renderCases[i/2], i%2 == 1
		path := filepath.Join(t.TempDir(), c.name+".sh")
		if err := os.WriteFile(path, []byte(RenderInstallToDiskScript(c.inst, records)), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, argv := range [][]string{{"sh", "-n", path}, {bash, "-n", path}, {shellcheck, "--shell=bash", "--severity=style", path}} {
			if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
				t.Errorf("%s: %s: %v\n%s", c.name, strings.Join(argv, " "), err, out)
			}
		}
	}
}
