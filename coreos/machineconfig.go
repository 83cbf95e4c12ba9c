package coreos

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"

	v3_0 "github.com/coreos/ignition/v2/config/v3_0"
	v3_1 "github.com/coreos/ignition/v2/config/v3_1"
	v3_2 "github.com/coreos/ignition/v2/config/v3_2"
	v3_3 "github.com/coreos/ignition/v2/config/v3_3"
	v3_4 "github.com/coreos/ignition/v2/config/v3_4"
	v3_5 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/vcontext/report"
	"github.com/sno-iso/sno-iso/internal/input"
	"gopkg.in/yaml.v3"
)

// Machine config pools a customization MachineConfig can target.
const (
	RoleMaster = "master"
	RoleWorker = "worker"
)

const (
	machineConfigAPIVersion = "machineconfiguration.openshift.io/v1"
	machineConfigKind       = "MachineConfig"
	machineConfigRoleLabel  = "machineconfiguration.openshift.io/role"

	// The Machine Config Operator reads these spec versions in spec.config in every release
	// that has bootstrap-in-place; older MCOs reject newer ones.
	mcoMinIgnitionVersion = "3.1.0"
	mcoMaxIgnitionVersion = "3.4.0"

	// MaxCustomizationSize bounds a customization file: it ends up inside the live ISO's
	// Ignition area, a few hundred KiB.
	MaxCustomizationSize = 4 << 20
	// maxCustomizationDepth bounds YAML nesting; a MachineConfig is about a dozen deep.
	maxCustomizationDepth = 64
)

// CustomizationName is metadata.name of the MachineConfig that holds a pool's customizations,
// the name openshift-install gives to an edited pointer config's MachineConfig.
func CustomizationName(role string) string {
	return "99-installer-ignition-" + role
}

// CustomizationManifestPath is where the bootstrap Ignition carries that MachineConfig:
// bootkube copies /opt/openshift/openshift/* to the Machine Config Operator, which renders it
// into the pool's configuration.
func CustomizationManifestPath(role string) string {
	return "/opt/openshift/openshift/99_openshift-installer-ignition_" + role + ".yaml"
}

// Customization is one user-supplied change of the installed node: an Ignition config
// (fragment) or a MachineConfig, parsed and validated.
type Customization struct {
	// Source names the input in messages, usually its file name.
	Source string
	// ignitionVersion is the spec version of config, "" when the input has no Ignition
	// config (a MachineConfig with only kernel arguments).
	ignitionVersion string
	// config is the Ignition config as JSON values, without its ignition.config sources or
	// kernelArguments section and without empty values.
	config          map[string]any
	kernelArguments []string
	extensions      []string
	warnings        []Warning
	// hadConfigSources tells that the input had ignition.config merge or replace sources,
	// which were dropped.
	hadConfigSources bool
}

// MachineConfig is a MachineConfig manifest that carries customizations for one pool.
type MachineConfig struct {
	Name string
	Role string
	// IgnitionVersion is the spec version of spec.config, one the MCO accepts.
	IgnitionVersion string
	// KernelArguments and Extensions are spec.kernelArguments and spec.extensions.
	KernelArguments []string
	Extensions      []string
	config          map[string]any
}

// machineConfigDocument is the manifest's shape, fields in the order `oc` writes them.
type machineConfigDocument struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		Config          map[string]any `yaml:"config"`
		KernelArguments []string       `yaml:"kernelArguments,omitempty"`
		Extensions      []string       `yaml:"extensions,omitempty"`
	} `yaml:"spec"`
}

// YAML returns the manifest, ready for openshift/ or `oc apply`.
func (mc *MachineConfig) YAML() ([]byte, error) {
	var doc machineConfigDocument
	doc.APIVersion, doc.Kind = machineConfigAPIVersion, machineConfigKind
	doc.Metadata.Name = mc.Name
	doc.Metadata.Labels = map[string]string{machineConfigRoleLabel: mc.Role}
	doc.Spec.Config = mc.config
	doc.Spec.KernelArguments, doc.Spec.Extensions = mc.KernelArguments, mc.Extensions
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func checkRole(role string) error {
	if role != RoleMaster && role != RoleWorker {
		return fmt.Errorf("role %q: a customization MachineConfig is for the %s or the %s pool", role, RoleMaster, RoleWorker)
	}
	return nil
}

// PointerCustomization does what openshift-install does with a user's edit of a pointer
// config: it returns the MachineConfig that carries the user config, without its
// ignition.config merge and replace sources, if and only if user means something else than
// base. A nil base stands for an empty config, so that any content counts as a
// customization. The configs are compared by meaning, not by bytes: key order, whitespace,
// the spec version, the order of entries keyed by path or name, and the spelling of data
// URLs (base64 or percent-encoded) make no difference. It returns nil when nothing was
// customized, and when user only removes from base, which a MachineConfig cannot express.
func PointerCustomization(role string, user, base []byte) (*MachineConfig, []Warning, error) {
	if err := checkRole(role); err != nil {
		return nil, nil, err
	}
	userMeaning, err := ignitionMeaning(user)
	if err != nil {
		return nil, nil, err
	}
	baseMeaning := map[string]any{}
	if base != nil {
		if baseMeaning, err = ignitionMeaning(base); err != nil {
			return nil, nil, fmt.Errorf("the base config: %w", err)
		}
	}
	if reflect.DeepEqual(userMeaning, baseMeaning) {
		return nil, nil, nil
	}
	custom, err := customizationFromIgnition("", user)
	if err != nil {
		return nil, nil, err
	}
	mc, warnings, err := MergeCustomizations(role, []*Customization{custom}, "")
	return mc, append(custom.Warnings(), warnings...), err
}

// ignitionMeaning is what a config does once applied, as JSON values: translated to the
// newest stable spec, without the spec version and the ignition.config sources (a
// MachineConfig cannot carry them), in canonical form.
func ignitionMeaning(raw []byte) (map[string]any, error) {
	ig, _, err := ParseIgnition(raw)
	if err != nil {
		return nil, err
	}
	tree, err := ignitionTree(raw, ig.Version, lastVersion)
	if err != nil {
		return nil, err
	}
	withoutConfigSources(tree)
	if ign, ok := tree["ignition"].(map[string]any); ok {
		delete(ign, "version")
	}
	meaning, _ := prune(canonical(tree, "")).(map[string]any)
	if meaning == nil {
		meaning = map[string]any{}
	}
	return meaning, nil
}

// ErrKargRemoval says that a customization removes kernel arguments, which a MachineConfig
// cannot do; the installation's DeleteKargs can.
var ErrKargRemoval = errors.New("kernelArguments.shouldNotExist: a MachineConfig can add kernel arguments but not remove them")

// LoadCustomization reads a customization file: an Ignition config (JSON) or a
// MachineConfig (YAML or JSON).
func LoadCustomization(path string) (*Customization, error) {
	// One byte more than allowed lets ParseCustomization say why the file is refused.
	data, err := input.ReadFile(path, MaxCustomizationSize+1, "a customization")
	if err != nil {
		return nil, err
	}
	return ParseCustomization(path, data)
}

// ParseCustomization parses a customization for the installed node: an Ignition config or
// fragment in JSON, or a MachineConfig for the master pool in YAML or JSON. source names it
// in messages.
func ParseCustomization(source string, data []byte) (*Customization, error) {
	if len(data) > MaxCustomizationSize {
		return nil, fmt.Errorf("%s is larger than %d bytes: a customization this large does not fit a live ISO; "+
			"fetch big files from a URL in the Ignition config", source, MaxCustomizationSize)
	}
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\ufeff")))
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s is empty: give an Ignition config or a MachineConfig", source)
	}
	var c *Customization
	var err error
	looksJSON := trimmed[0] == '{'
	var probe map[string]json.RawMessage
	jsonErr := json.Unmarshal(trimmed, &probe)
	if looksJSON && jsonErr == nil && probe["kind"] == nil {
		c, err = customizationFromIgnition(source, trimmed)
	} else {
		doc, yamlErr := decodeYAMLDocument(trimmed)
		if m, _ := doc.(map[string]any); looksJSON && jsonErr != nil && m["kind"] == nil {
			// Meant as a JSON Ignition config: Ignition's parser says where the syntax
			// error is.
			_, _, err = ParseIgnition(trimmed)
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if yamlErr != nil {
			return nil, fmt.Errorf("%s: neither an Ignition config (JSON) nor a MachineConfig (YAML): %w", source, yamlErr)
		}
		c, err = customizationFromMachineConfig(source, doc)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if c.hadConfigSources {
		c.warnings = append(c.warnings, Warning{Path: source + ": $.ignition.config",
			Message: "dropped: a MachineConfig cannot carry merge or replace sources (the Machine Config Server is the source)"})
	}
	return c, nil
}

// decodeYAMLDocument decodes one YAML document into JSON values. Aliases are refused: a
// MachineConfig has no use for them and they are how small YAML expands into huge values.
func decodeYAMLDocument(data []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("line %d: a second YAML document: give one MachineConfig per file", extra.Line)
	}
	return yamlValue(&doc, 0)
}

func yamlValue(n *yaml.Node, depth int) (any, error) {
	if depth > maxCustomizationDepth {
		return nil, fmt.Errorf("line %d: nested deeper than %d levels", n.Line, maxCustomizationDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, errors.New("an empty YAML document")
		}
		return yamlValue(n.Content[0], depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!int" && k.Tag != "!!bool") {
				return nil, fmt.Errorf("line %d, column %d: a mapping key that is not a name", k.Line, k.Column)
			}
			if _, seen := m[k.Value]; seen {
				return nil, fmt.Errorf("line %d, column %d: key %q is repeated", k.Line, k.Column, k.Value)
			}
			v, err := yamlValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := yamlValue(item, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, nil
		case "!!bool", "!!int", "!!float":
			var v any
			if err := n.Decode(&v); err != nil {
				return nil, fmt.Errorf("line %d, column %d: %v", n.Line, n.Column, err)
			}
			return jsonNumber(v), nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("line %d, column %d: YAML aliases are not supported in a MachineConfig", n.Line, n.Column)
}

// jsonNumber turns YAML's number types into the ones JSON decoding gives here.
func jsonNumber(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case uint64:
		return float64(x)
	}
	return v
}

func customizationFromMachineConfig(source string, doc any) (*Customization, error) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("neither an Ignition config (JSON) nor a MachineConfig (YAML): the document is not a mapping")
	}
	if _, isIgnition := m["ignition"]; isIgnition {
		return nil, errors.New("an Ignition config written in YAML (Butane?): " +
			"give Ignition as JSON (butane --strict in.bu > out.ign), or a MachineConfig")
	}
	if m["kind"] != machineConfigKind {
		return nil, fmt.Errorf("kind %v: "+
			"only a MachineConfig (kind: %s) or an Ignition config can customize the installed node", describe(m["kind"]), machineConfigKind)
	}
	if m["apiVersion"] != machineConfigAPIVersion {
		return nil, fmt.Errorf("apiVersion %v: a MachineConfig has apiVersion %s", describe(m["apiVersion"]), machineConfigAPIVersion)
	}
	metadata, _ := m["metadata"].(map[string]any)
	labels, _ := metadata["labels"].(map[string]any)
	if role, ok := labels[machineConfigRoleLabel]; ok && role != RoleMaster {
		return nil, fmt.Errorf("metadata.labels %s is %v: the single node is in the %s pool, "+
			"so only %s MachineConfigs apply to it", machineConfigRoleLabel, describe(role), RoleMaster, RoleMaster)
	}
	spec, ok := m["spec"].(map[string]any)
	if !ok && m["spec"] != nil {
		return nil, errors.New("spec is not a mapping")
	}
	var notMerged []string
	for key, v := range spec {
		switch key {
		case "config", "kernelArguments", "extensions":
		case "kernelType":
			if v != nil && v != "" && v != "default" {
				notMerged = append(notMerged, "spec."+key)
			}
		default:
			if v != false && v != "" && prune(v) != nil {
				notMerged = append(notMerged, "spec."+key)
			}
		}
	}
	if len(notMerged) > 0 {
		sort.Strings(notMerged)
		return nil, fmt.Errorf("%s: sno-iso merges only spec.config, spec.kernelArguments and spec.extensions; "+
			"add this MachineConfig to the manifests (openshift-install create manifests, then openshift/) instead", strings.Join(notMerged, ", "))
	}
	c := &Customization{Source: source}
	var err error
	if c.kernelArguments, err = stringList(spec["kernelArguments"], "spec.kernelArguments"); err != nil {
		return nil, err
	}
	if c.extensions, err = stringList(spec["extensions"], "spec.extensions"); err != nil {
		return nil, err
	}
	switch config := spec["config"].(type) {
	case nil:
		return c, nil
	case map[string]any:
		raw, err := json.Marshal(config)
		if err != nil {
			return nil, fmt.Errorf("spec.config: %v", err)
		}
		withConfig, err := customizationFromIgnition(source, raw)
		if err != nil {
			return nil, fmt.Errorf("spec.config: %w", err)
		}
		withConfig.kernelArguments = unionStrings(c.kernelArguments, withConfig.kernelArguments)
		withConfig.extensions = c.extensions
		return withConfig, nil
	}
	return nil, errors.New("spec.config is not a mapping (an Ignition config)")
}

func describe(v any) string {
	if v == nil {
		return "missing"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}

func stringList(v any, where string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a list", where)
	}
	var list []string
	for i, item := range items {
		s, ok := item.(string)
		if !ok || s == "" {
			return nil, fmt.Errorf("%s[%d] is not a non-empty string", where, i)
		}
		list = append(list, s)
	}
	return list, nil
}

// customizationFromIgnition validates an Ignition config in its own spec version and keeps
// what a MachineConfig can carry: everything but the ignition.config sources, with the
// kernelArguments section turned into MachineConfig kernel arguments.
func customizationFromIgnition(source string, raw []byte) (*Customization, error) {
	ig, warnings, err := ParseIgnition(raw)
	if err != nil {
		return nil, err
	}
	tree, err := ignitionTree(raw, ig.Version, ig.Version)
	if err != nil {
		return nil, err
	}
	c := &Customization{Source: source, ignitionVersion: ig.Version, config: tree, hadConfigSources: withoutConfigSources(tree)}
	if kargs, ok := tree["kernelArguments"].(map[string]any); ok {
		if kargs["shouldNotExist"] != nil {
			return nil, ErrKargRemoval
		}
		if c.kernelArguments, err = stringList(kargs["shouldExist"], "kernelArguments.shouldExist"); err != nil {
			return nil, err
		}
		delete(tree, "kernelArguments")
	}
	for _, w := range warnings {
		w.Path = sourcePrefix(source) + w.Path
		c.warnings = append(c.warnings, w)
	}
	return c, nil
}

// withoutConfigSources drops ignition.config: the merge or replace source is the pointer to
// the Machine Config Server, which a MachineConfig must not carry. It tells whether there
// was one.
func withoutConfigSources(tree map[string]any) bool {
	ign, _ := tree["ignition"].(map[string]any)
	_, had := ign["config"]
	delete(ign, "config")
	return had
}

// Warnings are the validator's non-fatal findings about the customization, and the parts of
// it that a MachineConfig cannot carry; their paths start with Source.
func (c *Customization) Warnings() []Warning {
	return c.warnings
}

// MergeCustomizations merges customizations into one MachineConfig for role, named
// CustomizationName(role). It returns nil when they change nothing.
//
// Ignition sections are merged by key: files, directories and links by path (one path
// namespace), units and their drop-ins by name, users and groups by name, disks and
// filesystems by device, RAID and LUKS volumes by name. The same entry twice with the same
// meaning is kept once; the same key with a different meaning is an error naming both
// sources, except for a user, whose SSH keys and groups are joined. Kernel arguments and
// extensions are joined. The warnings are about the merge; each part has its own Warnings.
//
// spec.config takes the newest spec version of the inputs, raised to 3.1 or lowered to 3.4
// (when nothing is lost) to fit what the MCO reads. When preferVersion is set (the
// bootstrap-in-place config's version, which the cluster's MCO certainly reads) the result
// is lowered to it when nothing is lost, and a warning says so when it cannot be.
func MergeCustomizations(role string, parts []*Customization, preferVersion string) (*MachineConfig, []Warning, error) {
	if err := checkRole(role); err != nil {
		return nil, nil, err
	}
	var warnings []Warning
	target := ""
	for _, c := range parts {
		if c.ignitionVersion == "" {
			continue
		}
		v, err := mcoVersion(c)
		if err != nil {
			return nil, warnings, err
		}
		if versionIndex(v) > versionIndex(target) {
			target = v
		}
	}
	if target == "" {
		target = clampToMCO(preferVersion)
	}
	merged := map[string]any{"ignition": map[string]any{"version": target}}
	m := treeMerger{origin: map[string]string{}}
	mc := &MachineConfig{Name: CustomizationName(role), Role: role, IgnitionVersion: target}
	for _, c := range parts {
		mc.KernelArguments = unionStrings(mc.KernelArguments, c.kernelArguments)
		mc.Extensions = unionStrings(mc.Extensions, c.extensions)
		if c.ignitionVersion == "" {
			continue
		}
		tree, err := c.configIn(target)
		if err != nil {
			return nil, warnings, err
		}
		if _, err := m.merge(merged, tree, nil, "", c.Source); err != nil {
			return nil, warnings, err
		}
	}
	if err := m.checkPathNamespace(merged); err != nil {
		return nil, warnings, err
	}
	if isEmptyConfig(merged) && len(mc.KernelArguments) == 0 && len(mc.Extensions) == 0 {
		return nil, warnings, nil
	}
	raw, err := json.Marshal(merged)
	if err == nil {
		// Validates the merge: two valid configs can make an invalid one.
		mc.config, err = ignitionTree(raw, target, target)
	}
	if err != nil {
		return nil, warnings, fmt.Errorf("the customizations merged: %w", err)
	}
	if prefer := clampToMCO(preferVersion); preferVersion != "" && versionIndex(prefer) < versionIndex(target) {
		if lowered, err := convertIgnition(raw, target, prefer); err == nil {
			mc.config, mc.IgnitionVersion = lowered, prefer
		} else {
			warnings = append(warnings, Warning{Path: CustomizationName(role), Message: fmt.Sprintf(
				"spec.config uses Ignition %s, newer than the bootstrap-in-place config's %s: the cluster's Machine Config Operator must read %s",
				target, preferVersion, target)})
		}
	}
	return mc, warnings, nil
}

// isEmptyConfig tells whether a pruned config tree sets nothing but its spec version.
func isEmptyConfig(tree map[string]any) bool {
	ign, _ := tree["ignition"].(map[string]any)
	return len(tree) == 1 && len(ign) == 1 && ign["version"] != nil
}

// configIn returns the customization's Ignition config in spec version target.
func (c *Customization) configIn(target string) (map[string]any, error) {
	raw, err := json.Marshal(c.config)
	if err != nil {
		return nil, err
	}
	tree, err := convertIgnition(raw, c.ignitionVersion, target)
	if err != nil {
		return nil, fmt.Errorf("%s%w", sourcePrefix(c.Source), err)
	}
	return tree, nil
}

// mcoVersion is the spec version the customization's config takes in a MachineConfig: its
// own, raised to the MCO's oldest or lowered to its newest when nothing is lost.
func mcoVersion(c *Customization) (string, error) {
	v := clampToMCO(c.ignitionVersion)
	if versionIndex(v) < versionIndex(c.ignitionVersion) {
		raw, err := json.Marshal(c.config)
		if err == nil {
			_, err = convertIgnition(raw, c.ignitionVersion, v)
		}
		if err != nil {
			return "", fmt.Errorf("%sIgnition %s is newer than the Machine Config Operator reads (%s to %s): %v; write the config in spec %s",
				sourcePrefix(c.Source), c.ignitionVersion, mcoMinIgnitionVersion, mcoMaxIgnitionVersion, err, mcoMaxIgnitionVersion)
		}
	}
	return v, nil
}

// sourcePrefix starts a message about an input named source ("" when the caller names it).
func sourcePrefix(source string) string {
	if source == "" {
		return ""
	}
	return source + ": "
}

func clampToMCO(version string) string {
	switch i := versionIndex(version); {
	case i < versionIndex(mcoMinIgnitionVersion):
		return mcoMinIgnitionVersion
	case i > versionIndex(mcoMaxIgnitionVersion):
		return mcoMaxIgnitionVersion
	}
	return version
}

func unionStrings(list, more []string) []string {
	for _, s := range more {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// ignitionTranslators parse a config of their spec version or an older one into their
// version's types, validating it in its own version; oldest first.
var ignitionTranslators = []struct {
	version string
	parse   func([]byte) (any, report.Report, error)
}{
	{"3.0.0", anyConfig(v3_0.ParseCompatibleVersion)},
	{"3.1.0", anyConfig(v3_1.ParseCompatibleVersion)},
	{"3.2.0", anyConfig(v3_2.ParseCompatibleVersion)},
	{"3.3.0", anyConfig(v3_3.ParseCompatibleVersion)},
	{"3.4.0", anyConfig(v3_4.ParseCompatibleVersion)},
	{"3.5.0", anyConfig(v3_5.ParseCompatibleVersion)},
}

var lastVersion = ignitionTranslators[len(ignitionTranslators)-1].version

// addCustomizationManifest merges the customizations, with the MachineConfig a
// bootstrap-in-place config may already carry at CustomizationManifestPath(RoleMaster),
// and writes the result there (mode 0644). raw is a valid config of spec version version;
// it is returned unchanged when the customizations change nothing.
func addCustomizationManifest(raw []byte, version string, parts []*Customization) ([]byte, []Warning, error) {
	manifestPath := CustomizationManifestPath(RoleMaster)
	var view configView
	if err := json.Unmarshal(raw, &view); err != nil {
		return nil, nil, err
	}
	for _, f := range view.Storage.Files {
		if f.Path != manifestPath {
			continue
		}
		data, err := fileContents(f)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", manifestPath, err)
		}
		existing, err := ParseCustomization("the bootstrap-in-place config's "+manifestPath, data)
		if err != nil {
			return nil, nil, err
		}
		parts = append([]*Customization{existing}, parts...)
	}
	mc, warnings, err := MergeCustomizations(RoleMaster, parts, version)
	if err != nil || mc == nil {
		return raw, warnings, err
	}
	manifest, err := mc.YAML()
	if err != nil {
		return nil, warnings, err
	}
	entry := map[string]any{
		"path":      manifestPath,
		"mode":      0o644,
		"overwrite": true,
		"contents":  map[string]any{"source": "data:;base64," + base64.StdEncoding.EncodeToString(manifest)},
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var config map[string]any
	if err := dec.Decode(&config); err != nil {
		return nil, warnings, err
	}
	storage, _ := config["storage"].(map[string]any)
	if storage == nil {
		storage = map[string]any{}
		config["storage"] = storage
	}
	files, _ := storage["files"].([]any)
	files = slices.DeleteFunc(files, func(f any) bool { return entryKey(f, "path") == manifestPath })
	storage["files"] = append(files, entry)
	edited, err := json.Marshal(config)
	if err != nil {
		return nil, warnings, err
	}
	// Through the config's own types again, so that it is written as every other config.
	ig, _, err := ParseIgnition(edited)
	if err != nil {
		return nil, warnings, fmt.Errorf("the Ignition %s config with %s added: %w", version, manifestPath, err)
	}
	out, err := ig.Marshal()
	return out, warnings, err
}
