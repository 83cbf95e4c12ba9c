package coreos

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestInstallerConfigFiles: coreos-installer's install config keys that install-to-disk
// honours are read; later files replace earlier scalars and append to lists, as
// coreos-installer reads its config files.
func TestInstallerConfigFiles(t *testing.T) {
	first, err := ParseInstallerConfig("a.yaml",
		[]byte("dest-device: /dev/sda\nappend-karg: [nosmt]\nconsole: [\"ttyS0,115200n8\"]\ncopy-network: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := ParseInstallerConfig("b.yaml",
		[]byte("dest-device: /dev/disk/by-id/wwn-1\nappend-karg:\n  - mitigations=off\ndelete-karg: [quiet]\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := InstallerConfig{}.Then(first).Then(second)
	yes := true
	want := InstallerConfig{DestDevice: "/dev/disk/by-id/wwn-1", AppendKargs: []string{"nosmt", "mitigations=off"},
		DeleteKargs: []string{"quiet"}, Consoles: []string{"ttyS0,115200n8"}, CopyNetwork: &yes}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged %+v, want %+v", got, want)
	}
	if empty, err := ParseInstallerConfig("empty.yaml", nil); err != nil || !reflect.DeepEqual(*empty, InstallerConfig{}) {
		t.Errorf("an empty file: %+v, %v", empty, err)
	}
}

func TestInstallerConfigErrors(t *testing.T) {
	for _, c := range []struct {
		yaml, want  string
		unknown     string // the suggestion of an UnknownInstallerKeyError
		unsupported bool
	}{
		{"dest-devise: /dev/sda\n", `unknown key "dest-devise"`, "dest-device", false},
		{"append-kargs: [a]\n", `did you mean "append-karg"?`, "append-karg", false},
		{"zzz: 1\n", `unknown key "zzz"`, "", false},
		{"ignition-url: https://x/y.ign\n",
			"ignition-url is not honoured by sno-iso's install-to-disk: the installed node boots the master", "", true},
		{"save-partlabel: [data]\n", "save-partlabel is not honoured", "", true},
		{"image-url: https://x/y.raw.xz\n", "start from a live ISO of the release to install", "", true},
		{"append-karg: nosmt\n", "line 1: append-karg: want a list of strings", "", false},
		{"append-karg: [1]\n", "want a string; quote it", "", false},
		{"console: [ttyS0,115200n8]\n", `"115200n8" is not a console`, "", false},
		{"copy-network: yes please\n", "want true or false", "", false},
		{"dest-device: [a]\n", "dest-device: want a string", "", false},
		{"dest-device: /a\ndest-device: /b\n", "dest-device is given twice", "", false},
		{"- a\n", "an install config is a mapping", "", false},
		{"a: &x [b]\nappend-karg: *x\n", `unknown key "a"`, "", false},
		{"append-karg: [\n", "not YAML", "", false},
	} {
		_, err := ParseInstallerConfig("c.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "c.yaml: ") {
			t.Errorf("%q: error %v, want %q", c.yaml, err, c.want)
			continue
		}
		var unknown *UnknownInstallerKeyError
		if errors.As(err, &unknown) && unknown.Suggestion != c.unknown {
			t.Errorf("%q: suggestion %q, want %q", c.yaml, unknown.Suggestion, c.unknown)
		}
		var unsupported *UnsupportedInstallerKeyError
		if errors.As(err, &unsupported) != c.unsupported {
			t.Errorf("%q: %T, unsupported %v", c.yaml, err, c.unsupported)
		}
	}
}

// FuzzParseInstallerConfig: what parses, written back as an install config, parses to the
// same settings; appending an empty config changes nothing.
func FuzzParseInstallerConfig(f *testing.F) {
	f.Add([]byte("dest-device: /dev/sda\nappend-karg: [nosmt]\nconsole: [ttyS0]\ncopy-network: true\n"))
	f.Add([]byte("delete-karg:\n  - quiet\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("platform: metal\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseInstallerConfig("f.yaml", data)
		if err != nil {
			return
		}
		doc := map[string]any{}
		if cfg.DestDevice != "" {
			doc["dest-device"] = cfg.DestDevice
		}
		for key, list := range map[string][]string{"append-karg": cfg.AppendKargs, "delete-karg": cfg.DeleteKargs, "console": cfg.Consoles} {
			if list != nil {
				doc[key] = list
			}
		}
		if cfg.CopyNetwork != nil {
			doc["copy-network"] = *cfg.CopyNetwork
		}
		out, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseInstallerConfig("again.yaml", out)
		if err != nil {
			t.Fatalf("re-reading %q: %v", out, err)
		}
		if !reflect.DeepEqual(normalize(*again), normalize(*cfg)) {
			t.Fatalf("%+v became %+v", cfg, again)
		}
		if !reflect.DeepEqual(normalize(cfg.Then(&InstallerConfig{})), normalize(*cfg)) {
			t.Fatalf("appending nothing changed %+v", cfg)
		}
	})
}

// normalize makes empty lists nil, which the YAML form cannot tell apart.
func normalize(c InstallerConfig) InstallerConfig {
	for _, l := range []*[]string{&c.AppendKargs, &c.DeleteKargs, &c.Consoles} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return c
}
