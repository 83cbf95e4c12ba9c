package coreos

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	k8syaml "sigs.k8s.io/yaml"
)

// pointer is a master pointer config as openshift-install writes it: the Machine Config
// Server and the root CA.
const pointer = `{"ignition":{"config":{"merge":[{"source":"https://api-int.sno.example.com:22623/config/master"}]},` +
	`"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="}]}},` +
	`"version":"3.2.0"}}`

// withFooFile is the pointer with a file /etc/foo added, the installer's "pointer
// customized" case.
const withFooFile = `{"ignition":{"config":{"merge":[{"source":"https://api-int.sno.example.com:22623/config/master"}]},` +
	`"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="}]}},` +
	`"version":"3.2.0"},"storage":{"files":[{"path":"/etc/foo","mode":420,"contents":{"source":"data:,hello%20world%0A"}}]}}`

// decodedManifest is a MachineConfig manifest read back through the Machine Config
// Operator's own API type (github.com/openshift/api/machineconfiguration/v1, strictly, so a
// field the MCO does not know fails), with spec.config also as JSON values.
type decodedManifest struct {
	mc     mcfgv1.MachineConfig
	config map[string]any
}

// readManifest writes mc as YAML, reads it back as the MCO does, checks the envelope for
// role, validates spec.config with the Ignition package of its version and returns the
// manifest.
func readManifest(t *testing.T, mc *MachineConfig, role string) decodedManifest {
	t.Helper()
	out, err := mc.YAML()
	if err != nil {
		t.Fatal(err)
	}
	var m decodedManifest
	if err := k8syaml.UnmarshalStrict(out, &m.mc); err != nil {
		t.Fatalf("the MCO's MachineConfig type does not read the manifest: %v\n%s", err, out)
	}
	if m.mc.APIVersion != "machineconfiguration.openshift.io/v1" || m.mc.Kind != "MachineConfig" ||
		m.mc.Name != "99-installer-ignition-"+role || m.mc.Labels["machineconfiguration.openshift.io/role"] != role {
		t.Fatalf("envelope: %+v", m.mc.TypeMeta)
	}
	config := m.mc.Spec.Config.Raw
	if len(config) > 0 {
		if err := json.Unmarshal(config, &m.config); err != nil {
			t.Fatalf("spec.config: %v", err)
		}
	}
	ig, _, err := ParseIgnition(config)
	if err != nil {
		t.Fatalf("spec.config is not a valid Ignition config: %v\n%s", err, out)
	}
	if ig.Version != mc.IgnitionVersion {
		t.Fatalf("spec.config version %s, MachineConfig says %s", ig.Version, mc.IgnitionVersion)
	}
	return m
}

// files indexes spec.config's files by path, with their decoded contents.
func manifestFiles(t *testing.T, m decodedManifest) map[string]string {
	t.Helper()
	files := map[string]string{}
	storage, _ := m.config["storage"].(map[string]any)
	list, _ := storage["files"].([]any)
	for _, f := range list {
		entry := f.(map[string]any)
		source := entry["contents"].(map[string]any)["source"].(string)
		data, err := fileContents(fileView{Contents: struct {
			Source      *string `json:"source"`
			Compression *string `json:"compression"`
		}{Source: &source}})
		if err != nil {
			t.Fatal(err)
		}
		files[entry["path"].(string)] = string(data)
	}
	return files
}

func reserialize(t *testing.T, raw string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(v, "", "    ") // map keys come out sorted, not as written
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestPointerNotCustomized: the installer's "not customized" case and every way of writing
// the same config again give no MachineConfig.
func TestPointerNotCustomized(t *testing.T) {
	reparsed, _, err := ParseIgnition([]byte(pointer))
	if err != nil {
		t.Fatal(err)
	}
	// The bug's case: the same content in two separately parsed values.
	remarshaled, err := reparsed.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	fileSpelledTwoWays := func(source string) string {
		return `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,a"}},` +
			`{"path":"/etc/foo","mode":420,"contents":{"source":"` + source + `"}}]}}`
	}
	cases := []struct {
		name, base, user string
	}{
		{"same bytes", pointer, pointer},
		{"parsed and written again", pointer, string(remarshaled)},
		{"re-serialized with sorted keys and indentation", pointer, reserialize(t, pointer)},
		{"keys reordered by hand", `{"ignition":{"version":"3.2.0","security":{"tls":{"certificateAuthorities":[{"source":"data:,ca"}]}}}}`,
			`{"ignition":{"security":{"tls":{"certificateAuthorities":[{"source":"data:,ca"}]}},"version":"3.2.0"}}`},
		{"another spec version", withFooFile, strings.Replace(withFooFile, `"version":"3.2.0"`, `"version":"3.4.0"`, 1)},
		{"translated from 3.0", strings.Replace(withFooFile, `"version":"3.2.0"`, `"version":"3.1.0"`, 1),
			`{"ignition":{"config":{"merge":[{"source":"https://api-int.sno.example.com:22623/config/master"}]},` +
				`"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="}]}},` +
				`"version":"3.0.0"},"storage":{"files":[{"path":"/etc/foo","mode":420,"contents":{"source":"data:,hello%20world%0A"}}]}}`},
		{"base64 and percent-encoded data URLs", fileSpelledTwoWays("data:,hello%20world%0A"),
			fileSpelledTwoWays("data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte("hello world\n")))},
		{"files in another order", `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/a","contents":{"source":"data:,1"}},{"path":"/b","contents":{"source":"data:,2"}}]}}`,
			`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/b","contents":{"source":"data:,2"}},{"path":"/a","contents":{"source":"data:,1"}}]}}`},
		{"only the merge source differs", pointer, strings.Replace(pointer, "api-int.sno.example.com", "192.0.2.10", 1)},
		{"strings spelled with escapes", `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/a","mode":420}]}}`,
			`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"\u002fetc\/a","mode":420}]}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, role := range []string{RoleMaster, RoleWorker} {
				mc, _, err := PointerCustomization(role, []byte(c.user), []byte(c.base))
				if err != nil {
					t.Fatal(err)
				}
				if mc != nil {
					y, _ := mc.YAML()
					t.Fatalf("%s: a MachineConfig for a config that was not customized:\n%s", role, y)
				}
			}
		})
	}
}

// TestPointerCustomized: the installer's "pointer customized" case, one added file, gives
// exactly one MachineConfig with that file and the CA, without the merge source.
func TestPointerCustomized(t *testing.T) {
	for _, role := range []string{RoleMaster, RoleWorker} {
		mc, _, err := PointerCustomization(role, []byte(withFooFile), []byte(pointer))
		if err != nil {
			t.Fatal(err)
		}
		if mc == nil {
			t.Fatalf("%s: no MachineConfig for an added file", role)
		}
		m := readManifest(t, mc, role)
		if got := manifestFiles(t, m); !reflect.DeepEqual(got, map[string]string{"/etc/foo": "hello world\n"}) {
			t.Fatalf("files = %q", got)
		}
		ign := m.config["ignition"].(map[string]any)
		if ign["config"] != nil {
			t.Fatalf("the MachineConfig keeps ignition.config: %v", ign["config"])
		}
		if ign["version"] != "3.2.0" || ign["security"] == nil {
			t.Fatalf("the user's version and root CA are not kept: %v", ign)
		}
	}
}

// TestPointerCustomizedWithoutBase: with no base, any content counts, nothing else does.
func TestPointerCustomizedWithoutBase(t *testing.T) {
	mc, _, err := PointerCustomization(RoleMaster, []byte(`{"ignition":{"version":"3.3.0","config":{"replace":{"source":"https://x/"}}}}`), nil)
	if err != nil || mc != nil {
		t.Fatalf("an empty config (but for its source) = %v, %v; want nothing", mc, err)
	}
	mc, _, err = PointerCustomization(RoleMaster, []byte(pointer), nil)
	if err != nil || mc == nil {
		t.Fatalf("a pointer with a root CA = %v, %v; want a MachineConfig", mc, err)
	}
}

func TestPointerDifferentContents(t *testing.T) {
	changed := strings.Replace(withFooFile, "hello%20world", "goodbye", 1)
	mc, _, err := PointerCustomization(RoleMaster, []byte(changed), []byte(withFooFile))
	if err != nil || mc == nil {
		t.Fatalf("changed file contents = %v, %v; want a MachineConfig", mc, err)
	}
	if got := manifestFiles(t, readManifest(t, mc, RoleMaster)); got["/etc/foo"] != "goodbye\n" {
		t.Fatalf("files = %q", got)
	}
}

// TestMachineConfigIgnitionVersion: spec.config takes a version the MCO reads.
func TestMachineConfigIgnitionVersion(t *testing.T) {
	file := `"storage":{"files":[{"path":"/etc/foo","contents":{"source":"data:,x"}}]}`
	cases := []struct {
		version, want string
		wantErr       []string
	}{
		{"3.0.0", "3.1.0", nil},
		{"3.1.0", "3.1.0", nil},
		{"3.4.0", "3.4.0", nil},
		{"3.5.0", "3.4.0", nil},
		{"3.6.0-experimental", "", []string{"3.6.0-experimental", "not supported"}},
	}
	for _, c := range cases {
		t.Run(c.version, func(t *testing.T) {
			user := `{"ignition":{"version":"` + c.version + `"},` + file + `}`
			mc, _, err := PointerCustomization(RoleMaster, []byte(user), nil)
			if c.wantErr != nil {
				wantError(t, err, c.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if mc.IgnitionVersion != c.want {
				t.Fatalf("version %s, want %s", mc.IgnitionVersion, c.want)
			}
			readManifest(t, mc, RoleMaster)
		})
	}
	// A 3.5 feature cannot go down to 3.4: refused, naming the versions.
	cex := `{"ignition":{"version":"3.5.0"},"storage":{"luks":[{"name":"data","device":"/dev/disk/by-partlabel/data","cex":{"enabled":true}}]}}`
	_, _, err := PointerCustomization(RoleMaster, []byte(cex), nil)
	wantError(t, err, "3.5.0", "3.1.0 to 3.4.0")
}

func wantError(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func parseCustomizations(t *testing.T, inputs ...string) []*Customization {
	t.Helper()
	var parts []*Customization
	for i := 0; i+1 < len(inputs); i += 2 {
		c, err := ParseCustomization(inputs[i], []byte(inputs[i+1]))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, c)
	}
	return parts
}

const kargsMachineConfig = `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 05-master-kargs
  labels:
    machineconfiguration.openshift.io/role: master
spec:
  kernelArguments:
    - console=ttyS0,115200n8
  config:
    ignition:
      version: 3.2.0
    storage:
      files:
        - path: /etc/foo
          mode: 0644
          contents:
            source: data:text/plain;base64,aGVsbG8gd29ybGQK
`

func TestMergeCustomizations(t *testing.T) {
	parts := parseCustomizations(t,
		"foo.ign", `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/foo","mode":420,"contents":{"source":"data:,hello%20world%0A"}}]}}`,
		"kargs.yaml", kargsMachineConfig,
		"unit.ign", `{"ignition":{"version":"3.1.0"},"systemd":{"units":[{"name":"hello.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"}]},`+
			`"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA1 a"]}]}}`,
		"more-keys.ign", `{"ignition":{"version":"3.3.0"},"kernelArguments":{"shouldExist":["nosmt","console=ttyS0,115200n8"]},`+
			`"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA2 b"]}]}}`,
		"empty.ign", `{"ignition":{"version":"3.4.0"}}`,
	)
	mc, _, err := MergeCustomizations(RoleMaster, parts, "")
	if err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, mc, RoleMaster)
	if mc.IgnitionVersion != "3.4.0" {
		t.Errorf("version %s, want the newest input's, 3.4.0", mc.IgnitionVersion)
	}
	if got := manifestFiles(t, m); !reflect.DeepEqual(got, map[string]string{"/etc/foo": "hello world\n"}) {
		t.Errorf("files = %q (the same file from JSON and YAML is one file)", got)
	}
	if want := []string{"console=ttyS0,115200n8", "nosmt"}; !reflect.DeepEqual(m.mc.Spec.KernelArguments, want) {
		t.Errorf("kernelArguments = %q, want %q", m.mc.Spec.KernelArguments, want)
	}
	units := m.config["systemd"].(map[string]any)["units"].([]any)
	if len(units) != 1 || units[0].(map[string]any)["name"] != "hello.service" {
		t.Errorf("units = %v", units)
	}
	users := m.config["passwd"].(map[string]any)["users"].([]any)
	keys := users[0].(map[string]any)["sshAuthorizedKeys"]
	if len(users) != 1 || !reflect.DeepEqual(keys, []any{"ssh-ed25519 AAAA1 a", "ssh-ed25519 AAAA2 b"}) {
		t.Errorf("users = %v, want core with both keys", users)
	}
	if _, ok := m.config["kernelArguments"]; ok {
		t.Error("spec.config keeps the Ignition kernelArguments section; the MCO wants spec.kernelArguments")
	}
}

// TestMergeEmpty: fragments that set nothing give no MachineConfig.
func TestMergeEmpty(t *testing.T) {
	parts := parseCustomizations(t,
		"a.ign", `{"ignition":{"version":"3.2.0"}}`,
		"b.ign", `{"ignition":{"version":"3.1.0","config":{"merge":[{"source":"https://x:22623/config/master"}]}}}`,
		"c.yaml", "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata: {name: x}\nspec:\n  config:\n    ignition: {version: 3.2.0}\n  fips: false\n  osImageURL: \"\"\n",
	)
	mc, warnings, err := MergeCustomizations(RoleMaster, parts, "3.2.0")
	if err != nil || mc != nil || len(warnings) != 0 {
		t.Fatalf("= %v, %v, %v; want nothing", mc, warnings, err)
	}
	dropped := parts[1].Warnings()
	if len(dropped) != 1 || !strings.Contains(dropped[0].String(), "b.ign") || !strings.Contains(dropped[0].String(), "ignition.config") {
		t.Fatalf("warnings %v: want one saying b.ign's merge source is dropped", dropped)
	}
}

func TestMergeConflicts(t *testing.T) {
	file := func(path, data string) string {
		return `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"` + path + `","contents":{"source":"data:,` + data + `"}}]}}`
	}
	unit := func(contents string) string {
		return `{"ignition":{"version":"3.2.0"},"systemd":{"units":[{"name":"a.service","contents":"` + contents + `"}]}}`
	}
	cases := []struct {
		name   string
		inputs []string
		want   []string
	}{
		{"one path, two contents", []string{"a.ign", file("/etc/foo", "1"), "b.ign", file("/etc/foo", "2")}, []string{`"/etc/foo"`, "a.ign", "b.ign"}},
		{"one unit defined twice", []string{"a.ign", unit("[Unit]"), "b.ign", unit("[Service]")}, []string{`"a.service"`, "a.ign", "b.ign"}},
		{"a file and a directory", []string{"a.ign", file("/etc/foo", "1"), "d.ign", `{"ignition":{"version":"3.2.0"},"storage":{"directories":[{"path":"/etc/foo"}]}}`},
			[]string{"/etc/foo", "a.ign", "d.ign", "directories"}},
		{"a MachineConfig against a fragment", []string{"kargs.yaml", kargsMachineConfig, "b.ign", file("/etc/foo", "other")}, []string{"/etc/foo", "kargs.yaml", "b.ign"}},
		{"two timeouts", []string{"a.ign", `{"ignition":{"version":"3.2.0","timeouts":{"httpTotal":10}}}`, "b.ign", `{"ignition":{"version":"3.2.0","timeouts":{"httpTotal":20}}}`},
			[]string{"httpTotal", "a.ign", "b.ign"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := MergeCustomizations(RoleMaster, parseCustomizations(t, c.inputs...), "")
			wantError(t, err, c.want...)
		})
	}
	// The same entry twice with the same meaning is no conflict.
	same := parseCustomizations(t, "a.ign", file("/etc/foo", "x%20y"), "b.ign",
		`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/foo","contents":{"source":"data:;base64,eCB5"}}]}}`)
	if mc, _, err := MergeCustomizations(RoleMaster, same, ""); err != nil || mc == nil {
		t.Fatalf("the same file twice = %v, %v", mc, err)
	}
}

func TestParseCustomizationErrors(t *testing.T) {
	mc := func(rest string) string {
		return "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: x\n" + rest
	}
	cases := []struct {
		name, data string
		want       []string
	}{
		{"empty file", "  \n", []string{"empty"}},
		{"worker MachineConfig", mc("  labels: {machineconfiguration.openshift.io/role: worker}\nspec: {}\n"), []string{"worker", "master pool"}},
		{"unmerged field", mc("spec:\n  osImageURL: quay.io/x\n  kernelType: realtime\n"), []string{"spec.kernelType", "spec.osImageURL", "openshift-install create manifests"}},
		{"other kind", "apiVersion: v1\nkind: ConfigMap\n", []string{"ConfigMap"}},
		{"wrong apiVersion", "apiVersion: v1\nkind: MachineConfig\n", []string{"apiVersion"}},
		{"Butane", "variant: fcos\nversion: 1.4.0\nignition: {}\n", []string{"Butane"}},
		{"alias", mc("spec:\n  kernelArguments: &k [a]\n  extensions: *k\n"), []string{"aliases"}},
		{"two documents", mc("spec: {}\n---\nkind: MachineConfig\n"), []string{"second YAML document"}},
		{"repeated key", "kind: MachineConfig\nkind: MachineConfig\n", []string{"repeated"}},
		{"invalid Ignition", `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"relative"}]}}`, []string{"$.storage.files.0.path"}},
		{"invalid spec.config", mc("spec:\n  config:\n    ignition: {version: 3.2.0}\n    storage: {files: [{path: relative}]}\n"), []string{"spec.config", "path"}},
		{"kernel argument removal", `{"ignition":{"version":"3.3.0"},"kernelArguments":{"shouldNotExist":["quiet"]}}`, []string{"shouldNotExist", "not remove them"}},
		{"not a config", "just words", []string{"neither"}},
		{"JSON syntax error", "{\"ignition\": {\"version\": \"3.2.0\",}\n}", []string{"not JSON", "line 1, column 35"}},
		{"too large", strings.Repeat(" ", MaxCustomizationSize+1), []string{"larger than"}},
		{"deep", strings.Repeat("[", 200), []string{"neither"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseCustomization("in.yaml", []byte(c.data))
			wantError(t, err, append(c.want, "in.yaml")...)
		})
	}
}

// TestMachineConfigYAMLRoundTrip: the manifest parses back to the same MachineConfig.
func TestMachineConfigYAMLRoundTrip(t *testing.T) {
	parts := parseCustomizations(t, "kargs.yaml", kargsMachineConfig, "unit.ign",
		`{"ignition":{"version":"3.2.0"},"systemd":{"units":[{"name":"a.service","enabled":false,"contents":"[Unit]\nDescription=yes: no\n"}]},`+
			`"storage":{"files":[{"path":"/etc/420","mode":384,"overwrite":true,"contents":{"source":"data:,true"}}],"links":[{"path":"/etc/l","target":"/etc/420"}]}}`)
	mc, _, err := MergeCustomizations(RoleMaster, parts, "")
	if err != nil {
		t.Fatal(err)
	}
	first, err := mc.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseCustomization("back.yaml", first)
	if err != nil {
		t.Fatalf("the manifest does not parse back: %v\n%s", err, first)
	}
	again, _, err := MergeCustomizations(RoleMaster, []*Customization{back}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, mc) {
		t.Fatalf("read back as\n%+v\nwant\n%+v", again, mc)
	}
	second, _ := again.YAML()
	if !bytes.Equal(first, second) {
		t.Fatalf("written differently:\n%s\nthen\n%s", first, second)
	}
}

// TestMergePrefersTheBootstrapVersion: the result goes down to the bootstrap-in-place
// config's spec when nothing is lost, and says so when it cannot.
func TestMergePrefersTheBootstrapVersion(t *testing.T) {
	plain := parseCustomizations(t, "a.ign", `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,a"}}]}}`)
	mc, warnings, err := MergeCustomizations(RoleMaster, plain, "3.2.0")
	if err != nil || mc.IgnitionVersion != "3.2.0" || len(warnings) != 0 {
		t.Fatalf("= %+v, %v, %v; want spec 3.2.0 and no warning", mc, warnings, err)
	}
	readManifest(t, mc, RoleMaster)
	// shouldExist came with spec 3.2.
	newer := parseCustomizations(t, "b.ign", `{"ignition":{"version":"3.2.0"},"passwd":{"users":[{"name":"old","shouldExist":false}]}}`)
	mc, warnings, err = MergeCustomizations(RoleMaster, newer, "3.1.0")
	if err != nil || mc.IgnitionVersion != "3.2.0" {
		t.Fatalf("= %+v, %v; want spec 3.2.0 kept", mc, err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Message, "3.1.0") {
		t.Fatalf("warnings %v: want one about the bootstrap config's 3.1.0", warnings)
	}
}

// TestPrepareLiveIgnitionAddsCustomizations: the MachineConfig lands in the live config at
// the installer's path, mode 0644, in the config's own spec version, merged with the one
// the config may already carry.
func TestPrepareLiveIgnitionAddsCustomizations(t *testing.T) {
	for _, version := range []string{"3.0.0", "3.2.0", "3.5.0"} {
		t.Run(version, func(t *testing.T) {
			parts := parseCustomizations(t, "foo.ign", withFooFile, "kargs.yaml", kargsMachineConfig[:strings.Index(kargsMachineConfig, "  config:")])
			out, _, err := PrepareLiveIgnition(bipConfig(t, version), LiveIgnitionOptions{
				Installation: Installation{Disk: "/dev/disk/by-id/wwn-1"}, Customizations: parts,
			})
			if err != nil {
				t.Fatal(err)
			}
			ig, _, err := ParseIgnition(out)
			if err != nil || ig.Version != version {
				t.Fatalf("the live config: %v, version %v", err, ig)
			}
			info, err := InspectIgnition(out)
			if err != nil {
				t.Fatal(err)
			}
			want := MachineConfigManifest{Path: CustomizationManifestPath(RoleMaster), Name: "99-installer-ignition-master", Role: RoleMaster}
			found := 0
			for _, m := range info.MachineConfigs {
				if m.Path == want.Path {
					found++
					if m != want {
						t.Errorf("manifest %+v, want %+v", m, want)
					}
				}
			}
			if found != 1 {
				t.Fatalf("%d customization manifests in %v", found, info.MachineConfigs)
			}
			var view struct {
				Storage struct {
					Files []struct {
						Path string `json:"path"`
						Mode int    `json:"mode"`
					} `json:"files"`
				} `json:"storage"`
			}
			if err := json.Unmarshal(out, &view); err != nil {
				t.Fatal(err)
			}
			for _, f := range view.Storage.Files {
				if f.Path == want.Path && f.Mode != 0o644 {
					t.Errorf("mode %o, want 644", f.Mode)
				}
			}

			// Built again on that output with one more file: the first MachineConfig's
			// content is kept, merged, not replaced.
			more := parseCustomizations(t, "bar.ign", `{"ignition":{"version":"3.1.0"},"storage":{"files":[{"path":"/etc/bar","contents":{"source":"data:,bar"}}]}}`)
			again, _, err := PrepareLiveIgnition(out, LiveIgnitionOptions{Installation: Installation{Disk: "/dev/disk/by-id/wwn-1"}, Customizations: more})
			if err != nil {
				t.Fatal(err)
			}
			manifest := liveFile(t, again, want.Path)
			for _, w := range []string{"/etc/foo", "/etc/bar", "console=ttyS0,115200n8"} {
				if !strings.Contains(string(manifest), w) {
					t.Errorf("the merged manifest lacks %s:\n%s", w, manifest)
				}
			}
		})
	}
}

func liveFile(t *testing.T, raw []byte, path string) []byte {
	t.Helper()
	var v configView
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, f := range v.Storage.Files {
		if f.Path == path {
			data, err := fileContents(f)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
	t.Fatalf("no %s in the config", path)
	return nil
}

func TestPrepareLiveIgnitionWithoutCustomization(t *testing.T) {
	in := bipConfig(t, "3.2.0")
	inst := Installation{Disk: "/dev/disk/by-id/wwn-1"}
	plain, _, err := PrepareLiveIgnition(in, LiveIgnitionOptions{Installation: inst})
	if err != nil {
		t.Fatal(err)
	}
	empty := parseCustomizations(t, "empty.ign", `{"ignition":{"version":"3.2.0"}}`)
	out, _, err := PrepareLiveIgnition(in, LiveIgnitionOptions{Installation: inst, Customizations: empty})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, plain) {
		t.Fatal("an empty customization changed the live config")
	}
	_, _, err = PrepareLiveIgnition([]byte(`{"ignition":{"version":"3.2.0"}}`), LiveIgnitionOptions{AllowAnyIgnition: true, Customizations: empty})
	wantError(t, err, "bootstrap-in-place")
}

func TestConfigCustomizations(t *testing.T) {
	cfg, err := ParseConfig("/srv/sno/sno.yaml", []byte("coreOSInstallation:\n  installationDisk: /dev/vda\ncustomizations:\n  - custom/chrony.ign\n  - /etc/sno/kargs.yaml\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/srv/sno/custom/chrony.ign", "/etc/sno/kargs.yaml"}; !reflect.DeepEqual(cfg.Customizations, want) {
		t.Fatalf("customizations = %q, want %q (relative to sno.yaml)", cfg.Customizations, want)
	}
	for _, bad := range []string{"customizations: a.ign\n", "customizations: [{a: b}]\n", "customizations: [\"\"]\n"} {
		_, err := ParseConfig("sno.yaml", []byte("coreOSInstallation:\n  installationDisk: /dev/vda\n"+bad))
		wantError(t, err, "sno.yaml:3:", "customizations")
	}
}
