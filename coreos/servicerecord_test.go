package coreos

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

// TestSetInstallToDiskServiceRecords: the script records its stages when the config carries
// the installer's service-record library, and does not source a library that is absent.
func TestSetInstallToDiskServiceRecords(t *testing.T) {
	inst := Installation{Disk: "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3"}
	var c map[string]any
	if err := json.Unmarshal(bipConfig(t, "3.2.0"), &c); err != nil {
		t.Fatal(err)
	}
	storage := c["storage"].(map[string]any)
	storage["files"] = without(storage["files"].([]any), "path", ServiceRecordScriptPath)
	stripped, _ := json.Marshal(c)
	for _, tc := range []struct {
		name    string
		config  []byte
		records bool
	}{{"with the library", bipConfig(t, "3.2.0"), true}, {"without it", stripped, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ig, _, err := ParseIgnition(tc.config)
			if err != nil {
				t.Fatal(err)
			}
			if err := ig.SetInstallToDisk(inst); err != nil {
				t.Fatal(err)
			}
			out, _ := ig.Marshal()
			files, _, _, _ := entries(t, out)
			script := decodeDataURL(t, files[InstallToDiskScriptPath].(map[string]any)["contents"].(map[string]any)["source"].(string))
			if got := strings.Contains(script, ". "+ServiceRecordScriptPath+"\n"); got != tc.records {
				t.Errorf("script sources the library: %v, want %v", got, tc.records)
			}
			if got := strings.Contains(script, "record_service_stage"); got != tc.records {
				t.Errorf("script records stages: %v, want %v", got, tc.records)
			}
		})
	}
}

func TestInstallToDiskScriptServiceRecordsGolden(t *testing.T) {
	checkGolden(t, "install-to-disk-service-records.sh", RenderInstallToDiskScript(renderCases[1].inst, true))
}

// TestInstallToDiskScriptRecordsStages runs the script with the installer's paths moved into
// a temporary directory, stand-ins for coreos-installer, shutdown and the disk tools, and a
// record library that refuses a stage started before the previous one ended (as the
// installer's does): the three stages are recorded in order, and a restart after
// coreos-installer succeeded records no second install.
func TestInstallToDiskScriptRecordsStages(t *testing.T) {
	bash := testenv.Tool(t, "bash", "bash")
	root := t.TempDir()
	opt, bin, records := filepath.Join(root, "opt"), filepath.Join(root, "bin"), filepath.Join(root, "records")
	for _, d := range []string{opt, bin} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(opt, ".bootkube.done"), nil, 0o644)
	library := `STAGE=""
record_service_stage_start() { [ -z "$STAGE" ] || { echo "nested stage $1"; exit 1; }; STAGE=$1; echo "start $1" >>` + records + `; }
record_service_stage_success() { echo "success $STAGE" >>` + records + `; STAGE=""; }
`
	os.WriteFile(filepath.Join(bin, "record.sh"), []byte(library), 0o644)
	for _, tool := range []string{"coreos-installer", "shutdown", "lsblk", "wipefs", "udevadm", "readlink"} {
		os.WriteFile(filepath.Join(bin, tool), []byte("#!/bin/sh\necho "+tool+" \"$@\" >>"+records+"\n"), 0o755)
	}
	script := RenderInstallToDiskScript(renderCases[1].inst, true)
	script = strings.ReplaceAll(script, ServiceRecordScriptPath, filepath.Join(bin, "record.sh"))
	script = strings.ReplaceAll(script, "/opt/openshift/", opt+"/")
	path := filepath.Join(root, "install-to-disk.sh")
	os.WriteFile(path, []byte(script), 0o755)
	run := func() string {
		cmd := exec.Command(bash, path)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		b, _ := os.ReadFile(records)
		os.Remove(records)
		var stages []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if strings.HasPrefix(l, "start ") || strings.HasPrefix(l, "success ") || strings.HasPrefix(l, "coreos-installer ") {
				stages = append(stages, strings.Fields(l)[0]+" "+strings.Fields(l)[1])
			}
		}
		return strings.Join(stages, ", ")
	}
	want := "start wait-for-bootkube, success wait-for-bootkube, start coreos-installer, coreos-installer install, success coreos-installer, start reboot, success reboot"
	if got := run(); got != want {
		t.Errorf("first run recorded\n%s\nwant\n%s", got, want)
	}
	want = "start wait-for-bootkube, success wait-for-bootkube, start reboot, success reboot"
	if got := run(); got != want {
		t.Errorf("restart recorded\n%s\nwant\n%s", got, want)
	}
}
