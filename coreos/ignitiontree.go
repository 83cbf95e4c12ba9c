package coreos

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/coreos/vcontext/report"
	"github.com/vincent-petithory/dataurl"
)

// Ignition configs as generic trees in one spec version, with the canonical forms that let
// two configs be compared by meaning rather than by bytes.

func anyConfig[C any](parse func([]byte) (C, report.Report, error)) func([]byte) (any, report.Report, error) {
	return func(raw []byte) (any, report.Report, error) {
		c, rpt, err := parse(raw)
		return c, rpt, err
	}
}

// versionIndex orders spec versions; -1 for "" or an unknown one.
func versionIndex(version string) int {
	for i, t := range ignitionTranslators {
		if t.version == version {
			return i
		}
	}
	return -1
}

// ignitionTree parses raw, a config of spec version from, into the types of spec version to
// (from or newer) and returns it as JSON values without empty ones.
func ignitionTree(raw []byte, from, to string) (map[string]any, error) {
	i := versionIndex(to)
	if i < 0 || versionIndex(from) < 0 || versionIndex(from) > i {
		return nil, fmt.Errorf("cannot translate Ignition %s to %s", from, to)
	}
	config, rpt, err := ignitionTranslators[i].parse(raw)
	if err != nil {
		if _, fatal := reportEntries(rpt); len(fatal) > 0 {
			return nil, fmt.Errorf("invalid Ignition %s config: %s", from, strings.Join(fatal, "; "))
		}
		return nil, fmt.Errorf("invalid Ignition %s config: %w", from, err)
	}
	out, err := json.Marshal(config)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	tree = prune(numbers(tree))
	m, _ := tree.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// convertIgnition returns raw, a config of spec version from, in spec version to: translated
// up, or down when the lower version expresses all of it (translating the result back up
// gives the same config), else an error.
func convertIgnition(raw []byte, from, to string) (map[string]any, error) {
	if versionIndex(to) >= versionIndex(from) {
		return ignitionTree(raw, from, to)
	}
	own, err := ignitionTree(raw, from, from)
	if err != nil {
		return nil, err
	}
	lowered := map[string]any{}
	for k, v := range own {
		lowered[k] = v
	}
	ign := map[string]any{}
	for k, v := range own["ignition"].(map[string]any) {
		ign[k] = v
	}
	ign["version"] = to
	lowered["ignition"] = ign
	loweredRaw, err := json.Marshal(lowered)
	if err != nil {
		return nil, err
	}
	errLossy := fmt.Errorf("the config uses features of Ignition %s that spec %s lacks", from, to)
	down, err := ignitionTree(loweredRaw, to, to)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errLossy, err)
	}
	downRaw, err := json.Marshal(down)
	if err != nil {
		return nil, err
	}
	back, err := ignitionTree(downRaw, to, from)
	if err != nil || !reflect.DeepEqual(back, own) {
		return nil, errLossy
	}
	return down, nil
}

// numbers turns the json.Numbers of a decoded tree into int64 (every Ignition number is an
// integer) or float64, so that YAML writes them as plain numbers.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// prune drops nulls, empty objects and empty lists, which mean "not set" in Ignition; the
// Ignition types write many of them. It returns nil for a value that is empty itself.
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if p := prune(e); p == nil {
				delete(x, k)
			} else {
				x[k] = p
			}
		}
		if len(x) == 0 {
			return nil
		}
	case []any:
		if len(x) == 0 {
			return nil
		}
		for i, e := range x {
			x[i] = prune(e)
		}
	}
	return v
}

// keyedLists are the Ignition lists whose entries are identified by a field, by schema path
// (object keys joined with dots, list indices left out). Their order carries no meaning.
var keyedLists = map[string]string{
	"ignition.config.merge":                        "source",
	"ignition.security.tls.certificateAuthorities": "source",
	"storage.files":                                "path",
	"storage.directories":                          "path",
	"storage.links":                                "path",
	"storage.disks":                                "device",
	"storage.filesystems":                          "device",
	"storage.raid":                                 "name",
	"storage.luks":                                 "name",
	"systemd.units":                                "name",
	"systemd.units.dropins":                        "name",
	"passwd.users":                                 "name",
	"passwd.groups":                                "name",
}

func schemaPath(schema, key string) string {
	if schema == "" {
		return key
	}
	return schema + "." + key
}

// canonical returns a copy of a config tree (at schema path schema) in which meaning
// decides equality: data URLs are replaced by their decoded bytes, and keyed lists are
// sorted by key.
func canonical(v any, schema string) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && k == "source" {
				c[k] = canonicalSource(s)
			} else {
				c[k] = canonical(e, schemaPath(schema, k))
			}
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = canonical(e, schema)
		}
		if key, ok := keyedLists[schema]; ok {
			sort.SliceStable(c, func(i, j int) bool { return entryKey(c[i], key) < entryKey(c[j], key) })
		}
		return c
	}
	return v
}

// canonicalSource stands a data URL for the bytes it holds: the media type and the
// encoding (base64 or percent) do not change the file Ignition writes.
func canonicalSource(s string) any {
	if !strings.HasPrefix(s, "data:") {
		return s
	}
	u, err := dataurl.DecodeString(s)
	if err != nil {
		return s
	}
	return map[string]any{"data": base64.StdEncoding.EncodeToString(u.Data)}
}

// entryKey is the key of a keyed list's entry; data URLs (CA sources) by their bytes.
func entryKey(entry any, key string) string {
	m, _ := entry.(map[string]any)
	if v, ok := m[key]; ok {
		if s, ok := canonicalSource(fmt.Sprint(v)).(map[string]any); ok {
			return "data:" + s["data"].(string)
		}
		return fmt.Sprint(v)
	}
	return ""
}
