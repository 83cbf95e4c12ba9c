package coreos

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestInspectInstallerConfig(t *testing.T) {
	info, err := InspectIgnition(bipConfig(t, "3.2.0"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Installation.Disk != "/dev/sda" || info.Installation.EffectiveRebootDelay() != time.Minute {
		t.Errorf("installation %+v", info.Installation)
	}
	if want := []string{"-i", "/opt/openshift/master.ign", "/dev/sda"}; !reflect.DeepEqual(info.InstallerArgs, want) {
		t.Errorf("installer args %q, want %q", info.InstallerArgs, want)
	}
	var names []string
	for _, mc := range info.MachineConfigs {
		names = append(names, mc.Name+"/"+mc.Role)
	}
	if want := []string{"99-master-ssh/master", "99-worker-ssh/worker"}; !reflect.DeepEqual(names, want) {
		t.Errorf("machine configs %q, want %q", names, want)
	}
}

func TestInspectGivesBackWhatWasSet(t *testing.T) {
	inst := Installation{
		Disk: "/dev/disk/by-path/pci-0000:00:17.0-ata-1", CopyNetwork: true,
		AppendKargs: []string{"console=ttyS0,115200n8", `foo="a b"`, "it's"}, DeleteKargs: []string{"nomodeset"},
		WipeDisk: true, RebootDelay: ptr(7 * time.Minute),
	}
	out, _, err := PrepareLiveIgnition(bipConfig(t, "3.4.0"), LiveIgnitionOptions{Installation: inst})
	if err != nil {
		t.Fatal(err)
	}
	info, err := InspectIgnition(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(info.Installation, inst) {
		t.Errorf("inspected %+v\nset       %+v", info.Installation, inst)
	}
	want := []string{"-i", "/opt/openshift/master.ign", "--copy-network", "--append-karg", "console=ttyS0,115200n8",
		"--append-karg", `foo="a b"`, "--append-karg", "it's", "--delete-karg", "nomodeset", inst.Disk}
	if !reflect.DeepEqual(info.InstallerArgs, want) {
		t.Errorf("installer args %q\nwant %q", info.InstallerArgs, want)
	}
}

// scriptConfig is a minimal config whose install-to-disk.sh is script, gzipped if asked.
func scriptConfig(t *testing.T, script string, gzipped bool) []byte {
	t.Helper()
	data := []byte(script)
	contents := map[string]any{}
	if gzipped {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		data = b.Bytes()
		contents["compression"] = "gzip"
	}
	contents["source"] = "data:;base64," + base64.StdEncoding.EncodeToString(data)
	out, err := json.Marshal(map[string]any{
		"ignition": map[string]any{"version": "3.2.0"},
		"storage":  map[string]any{"files": []any{map[string]any{"path": InstallToDiskScriptPath, "contents": contents}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInspectScripts(t *testing.T) {
	for _, c := range []struct {
		name, script string
		gzipped      bool
		want         Installation
		wantErr      string
	}{
		{"hand-edited, gzipped", "#!/bin/bash\ncoreos-installer install -n -i /opt/openshift/master.ign \\\n  --append-karg=ip=dhcp \"/dev/disk/by-id/wwn-1\"\nshutdown -r +2 bye\n",
			true, Installation{Disk: "/dev/disk/by-id/wwn-1", CopyNetwork: true, AppendKargs: []string{"ip=dhcp"}, RebootDelay: ptr(2 * time.Minute)}, ""},
		{"absolute path and kcli-style wipe", "wipefs -a /dev/vda\n/usr/bin/coreos-installer install --insecure /dev/vda # target\n",
			false, Installation{Disk: "/dev/vda", WipeDisk: true}, ""},
		{"no installer command", "#!/bin/sh\necho hi\n", false, Installation{}, "no coreos-installer install command"},
		{"no disk", "coreos-installer install -i /opt/openshift/master.ign\n", false, Installation{}, "without a destination device"},
		{"option without value", "coreos-installer install /dev/sda --append-karg\n", false, Installation{}, "--append-karg without a value"},
		{"unterminated quote", "coreos-installer install '/dev/sda\n", false, Installation{}, "line 1: unterminated ' quote"},
	} {
		t.Run(c.name, func(t *testing.T) {
			info, err := InspectIgnition(scriptConfig(t, c.script, c.gzipped))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(info.Installation, c.want) {
				t.Errorf("got %+v\nwant %+v", info.Installation, c.want)
			}
		})
	}
}

func TestInspectErrors(t *testing.T) {
	for _, c := range []struct{ name, input, want string }{
		{"not JSON", "{", "not an Ignition config"},
		{"no script", `{"ignition": {"version": "3.2.0"}}`, "has no /usr/local/bin/install-to-disk.sh"},
		{"not a data URL", `{"storage": {"files": [{"path": "/usr/local/bin/install-to-disk.sh", "contents": {"source": "https://example.com/x"}}]}}`, "$.storage.files.0 (/usr/local/bin/install-to-disk.sh): contents.source is not a data URL"},
		{"bad gzip", `{"storage": {"files": [{"path": "/usr/local/bin/install-to-disk.sh", "contents": {"source": "data:,abc", "compression": "gzip"}}]}}`, "gzip contents"},
		{"unknown compression", `{"storage": {"files": [{"path": "/usr/local/bin/install-to-disk.sh", "contents": {"source": "data:,abc", "compression": "xz"}}]}}`, `unknown compression "xz"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := InspectIgnition([]byte(c.input))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
