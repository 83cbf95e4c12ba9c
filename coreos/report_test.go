package coreos

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/progress"
)

// With a report URL the live config carries the reporter, its URL, the live unit, drop-ins
// on bootkube.service and install-to-disk.service (their own contents untouched), an
// install-to-disk.sh that reports the install's start and end, and the MachineConfig holds
// the installed system's unit; in every spec version.
func TestPrepareLiveIgnitionReportHooks(t *testing.T) {
	hooks := &progress.Hooks{URL: "http://10.0.2.2:8080/TOKEN/sno/report"}
	inst := Installation{Disk: "/dev/disk/by-id/virtio-sno"}
	for _, version := range SupportedIgnitionVersions() {
		t.Run(version, func(t *testing.T) {
			in := bipConfig(t, version)
			plain, _, err := PrepareLiveIgnition(in, LiveIgnitionOptions{Installation: inst})
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := PrepareLiveIgnition(in, LiveIgnitionOptions{Installation: inst, Report: hooks})
			if err != nil {
				t.Fatal(err)
			}
			var before, after struct {
				Storage struct {
					Files []fileView `json:"files"`
				} `json:"storage"`
				Systemd struct {
					Units []struct {
						Name     string  `json:"name"`
						Enabled  *bool   `json:"enabled"`
						Contents *string `json:"contents"`
						Dropins  []struct {
							Name     string `json:"name"`
							Contents string `json:"contents"`
						} `json:"dropins"`
					} `json:"units"`
				} `json:"systemd"`
			}
			json.Unmarshal(plain, &before)
			if err := json.Unmarshal(out, &after); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{}
			for _, f := range after.Storage.Files {
				files[f.Path] = decodeDataURL(t, *f.Contents.Source)
			}
			if files[progress.URLPath] != hooks.URL+"\n" || !strings.Contains(files[progress.ReporterPath], "curl ") {
				t.Errorf("report URL file %q, reporter present: %v", files[progress.URLPath], files[progress.ReporterPath] != "")
			}
			script := files[InstallToDiskScriptPath]
			started := strings.Index(script, progress.ScriptCall(progress.InstallStarted))
			installer := strings.Index(script, "coreos-installer install")
			done := strings.Index(script, progress.ScriptCall(progress.InstallDone))
			reboot := strings.Index(script, "shutdown -r")
			if started < 0 || !(started < installer && installer < done && done < reboot) {
				t.Errorf("install-to-disk.sh reports in the wrong places:\n%s", script)
			}
			mc := files[CustomizationManifestPath(RoleMaster)]
			if !strings.Contains(mc, progress.InstalledUnit) || !strings.Contains(mc, progress.URLPath) {
				t.Errorf("the MachineConfig lacks the installed system's hooks:\n%s", mc)
			}
			beforeUnits := map[string]string{}
			for _, u := range before.Systemd.Units {
				if u.Contents != nil {
					beforeUnits[u.Name] = *u.Contents
				}
			}
			dropins := map[string]string{}
			for _, u := range after.Systemd.Units {
				for _, d := range u.Dropins {
					dropins[u.Name+"/"+d.Name] = d.Contents
				}
				if u.Name == progress.LiveUnit && (u.Enabled == nil || !*u.Enabled) {
					t.Errorf("%s is not enabled", u.Name)
				}
				if u.Contents != nil && beforeUnits[u.Name] != "" && *u.Contents != beforeUnits[u.Name] {
					t.Errorf("%s changed", u.Name)
				}
			}
			if !strings.Contains(dropins[BootkubeUnitName+"/"+progress.DropinName], "ExecStopPost=-"+progress.ReporterPath+" --stopped %n bootkube-done") ||
				!strings.Contains(dropins[InstallToDiskUnitName+"/"+progress.DropinName], "--stopped %n") {
				t.Errorf("drop-ins: %v", dropins)
			}
		})
	}
}
