package embed

import (
	"encoding/json"
	"fmt"
)

const featuresPath = "COREOS/FEATURES.JSO"

// Features are the capabilities a live image declares in coreos/features.json. A missing file
// means every feature is absent; unknown keys are ignored.
type Features struct {
	// InstallerConfig: the installer reads YAML config files from /etc/coreos/installer.d.
	InstallerConfig bool `json:"installer-config"`
	// InstallerConfigDirectives lists the installer config keys the image understands.
	InstallerConfigDirectives map[string]bool `json:"installer-config-directives"`
	// LiveInitrdNetwork: the live initramfs reads keyfiles from /etc/coreos-firstboot-network.
	LiveInitrdNetwork bool `json:"live-initrd-network"`
}

// ParseFeatures decodes coreos/features.json. Keys match exactly, as coreos-installer's
// reader has them (encoding/json alone would take "Live-Initrd-Network" too); a key given
// twice counts as its last value.
func ParseFeatures(b []byte) (Features, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return Features{}, fmt.Errorf("parsing coreos/features.json: %w", err)
	}
	var f Features
	for key, target := range map[string]any{
		"installer-config": &f.InstallerConfig, "installer-config-directives": &f.InstallerConfigDirectives,
		"live-initrd-network": &f.LiveInitrdNetwork,
	} {
		if raw, ok := keys[key]; ok {
			if err := json.Unmarshal(raw, target); err != nil {
				return Features{}, fmt.Errorf("parsing coreos/features.json: %s: %w", key, err)
			}
		}
	}
	return f, nil
}

// FindFeatures reads coreos/features.json; found is false when the ISO has none.
func FindFeatures(iso ISO) (f Features, found bool, err error) {
	raw, found, err := readFile(iso, featuresPath)
	if err != nil || !found {
		return Features{}, found, err
	}
	f, err = ParseFeatures(raw)
	return f, true, err
}
