package coreos

import (
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"
)

// LoadInstallConfig reads bootstrapInPlace.installationDisk from an install-config.yaml.
// Other keys are ignored; a missing bootstrapInPlace section is an error.
func LoadInstallConfig(path string) (Installation, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return Installation{}, err
	}
	return ParseInstallConfig(path, data)
}

// ParseInstallConfig reads bootstrapInPlace from the contents of an install-config.yaml,
// matching keys as openshift-install does: it converts YAML to JSON (sigs.k8s.io/yaml) and
// decodes it with encoding/json, whose field matching ignores case, so the
// `BootstrapInPlace: {InstallationDisk: ...}` spelling found in many blogs works too.
func ParseInstallConfig(name string, data []byte) (Installation, error) {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Installation{}, fmt.Errorf("%s: %v", name, err)
	}
	asJSON, err := json.Marshal(jsonCompatible(doc))
	if err != nil {
		return Installation{}, fmt.Errorf("%s: %v", name, err)
	}
	var ic struct {
		BootstrapInPlace *struct {
			InstallationDisk string `json:"installationDisk"`
		} `json:"bootstrapInPlace"`
	}
	if err := json.Unmarshal(asJSON, &ic); err != nil {
		return Installation{}, fmt.Errorf("%s: not an install-config: %v", name, err)
	}
	if ic.BootstrapInPlace == nil {
		return Installation{}, fmt.Errorf("%s has no bootstrapInPlace section: add bootstrapInPlace.installationDisk, "+
			"as openshift-install create single-node-ignition-config requires", name)
	}
	inst := Installation{Disk: ic.BootstrapInPlace.InstallationDisk}
	if inst.Disk == "" {
		return Installation{}, fmt.Errorf("%s: bootstrapInPlace.installationDisk is not set", name)
	}
	if _, err := ValidateDisk(inst.Disk); err != nil {
		return Installation{}, fmt.Errorf("%s: bootstrapInPlace.installationDisk: %v", name, err)
	}
	return inst, nil
}

// jsonCompatible turns what yaml.v3 decodes into values encoding/json accepts, as
// sigs.k8s.io/yaml does: mapping keys of any scalar type become their string form.
func jsonCompatible(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = jsonCompatible(x)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[fmt.Sprint(k)] = jsonCompatible(x)
		}
		return m
	case []any:
		for i, x := range v {
			v[i] = jsonCompatible(x)
		}
		return v
	}
	return v
}
