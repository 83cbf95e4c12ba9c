package coreos

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// parserKeys lists every key the sno.yaml parser accepts, as ConfigKeys spells them.
func parserKeys() []string {
	keys := slices.Clone(topLevelKeys)
	for section, known := range map[string][]string{
		installationKey: installationKeys, liveKargsKey: liveKargsKeys, networkKey: networkKeys,
		outputKey: outputKeys, bmcKey: bmcKeys,
		// nmstate.ParseNICs reads these for each entry of interfaces.
		interfacesKey + "[]": {"name", "macAddress"},
	} {
		for _, k := range known {
			keys = append(keys, section+"."+k)
		}
	}
	return keys
}

// TestConfigKeysDocumentTheParser: every key the parser accepts is documented, and every
// documented key is one it accepts.
func TestConfigKeysDocumentTheParser(t *testing.T) {
	documented := map[string]bool{}
	for _, d := range ConfigKeys {
		if documented[d.Key] {
			t.Errorf("%s is documented twice", d.Key)
		}
		documented[d.Key] = true
		if d.Type == "" || d.Default == "" || d.Meaning == "" {
			t.Errorf("%s lacks its type, default or meaning: %+v", d.Key, d)
		}
	}
	accepted := parserKeys()
	for _, k := range accepted {
		if !documented[k] {
			t.Errorf("sno.yaml key %s is not documented in ConfigKeys", k)
		}
	}
	for k := range documented {
		if !slices.Contains(accepted, k) {
			t.Errorf("ConfigKeys documents %s, which the parser does not accept", k)
		}
	}
}

// TestConfigKeyExamplesParse: an sno.yaml made of every documented example parses, and each
// example lands in the field its key names; bootstrapInPlace, which excludes
// coreOSInstallation, parses with the installation's examples too.
func TestConfigKeyExamplesParse(t *testing.T) {
	file := func(installationSection string) string {
		var b strings.Builder
		section := ""
		for _, d := range ConfigKeys {
			if d.Example == "" && d.Key != installationSection && strings.Contains(d.Key, ".") {
				continue
			}
			top, sub, nested := strings.Cut(d.Key, ".")
			switch {
			case top == installConfigSection && installationSection != installConfigSection,
				top == installationKey && installationSection != installationKey,
				strings.HasPrefix(top, interfacesKey+"[]"):
				continue
			case !nested && d.Example == "":
				section = top
				fmt.Fprintf(&b, "%s:\n", top)
				if top == installConfigSection {
					for _, inst := range ConfigKeys {
						if k, ok := strings.CutPrefix(inst.Key, installationKey+"."); ok {
							fmt.Fprintf(&b, "  %s: %s\n", k, inst.Example)
						}
					}
				}
			case !nested:
				section = ""
				fmt.Fprintf(&b, "%s: %s\n", top, d.Example)
			case top == section:
				fmt.Fprintf(&b, "  %s: %s\n", sub, d.Example)
			}
		}
		return b.String()
	}
	for _, section := range []string{installationKey, installConfigSection} {
		text := file(section)
		// The examples of bmc.insecure and bmc.caFile exclude each other.
		text = strings.Replace(text, "  insecure: true\n", "", 1)
		cfg, err := ParseConfig(filepath.Join(t.TempDir(), "sno.yaml"), []byte(text))
		if err != nil {
			t.Fatalf("the examples do not parse: %v\n%s", err, text)
		}
		if cfg.Installation.Disk != "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3" || !cfg.Installation.WipeDisk ||
			cfg.Output.Kind != "minimal" || cfg.BMC == nil || cfg.BMC.SystemID != "System.Embedded.1" ||
			cfg.Hostname != "sno1.example.com" || len(cfg.NICs) != 1 || len(cfg.LiveKargs.Replace) != 1 ||
			len(cfg.NetworkKeyfiles) != 1 || len(cfg.Customizations) != 1 {
			t.Errorf("the examples parse to %+v\n%s", cfg, text)
		}
	}
}

// TestConfigExampleParses: the example file that the help shows is a valid sno.yaml.
func TestConfigExampleParses(t *testing.T) {
	cfg, err := ParseConfig(filepath.Join(t.TempDir(), "sno.yaml"), []byte(ConfigExample))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Installation.Disk == "" || cfg.BMC == nil || len(cfg.NetworkNMState) != 1 {
		t.Errorf("the example parses to %+v", cfg)
	}
}
