package coreos

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/sno-iso/sno-iso/progress"
)

// reportHooksSource names the progress hooks' MachineConfig part in messages.
const reportHooksSource = "sno-iso's progress report hooks"

// addReportHooks writes the live progress hooks into raw, a valid config of spec version
// version: their files and units replace entries of the same path or name, and their drop-ins
// join the units they extend, whose own contents stay as they are.
func addReportHooks(raw []byte, hooks progress.Hooks) ([]byte, error) {
	files, units := hooks.Live()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var config map[string]any
	if err := dec.Decode(&config); err != nil {
		return nil, err
	}
	storage := objectAt(config, "storage")
	list, _ := storage["files"].([]any)
	for _, f := range files {
		list = slices.DeleteFunc(list, func(e any) bool { return entryKey(e, "path") == f.Path })
		list = append(list, fileEntry(f))
	}
	storage["files"] = list
	systemd := objectAt(config, "systemd")
	unitList, _ := systemd["units"].([]any)
	for _, u := range units {
		unitList = addUnit(unitList, u)
	}
	systemd["units"] = unitList
	edited, err := json.Marshal(config)
	if err != nil {
		return nil, err
	}
	ig, _, err := ParseIgnition(edited)
	if err != nil {
		return nil, fmt.Errorf("the config with %s added: %w", reportHooksSource, err)
	}
	return ig.Marshal()
}

// reportCustomization is the installed system's hooks, as a customization for the master
// MachineConfig.
func reportCustomization(hooks progress.Hooks) (*Customization, error) {
	files, units := hooks.Installed()
	config := map[string]any{"ignition": map[string]any{"version": "3.2.0"}}
	var fileList, unitList []any
	for _, f := range files {
		fileList = append(fileList, fileEntry(f))
	}
	for _, u := range units {
		unitList = addUnit(unitList, u)
	}
	config["storage"] = map[string]any{"files": fileList}
	config["systemd"] = map[string]any{"units": unitList}
	raw, err := json.Marshal(config)
	if err != nil {
		return nil, err
	}
	return ParseCustomization(reportHooksSource, raw)
}

func objectAt(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	if o == nil {
		o = map[string]any{}
		m[key] = o
	}
	return o
}

func fileEntry(f progress.File) map[string]any {
	return map[string]any{
		"path":      f.Path,
		"mode":      f.Mode,
		"overwrite": true,
		"contents":  map[string]any{"source": "data:;base64," + base64.StdEncoding.EncodeToString(f.Data)},
	}
}

// addUnit puts u into a units list: a unit with contents replaces the one of its name; a
// unit's drop-ins replace those of the same name in the existing entry, or make one.
func addUnit(list []any, u progress.Unit) []any {
	if u.Contents != "" {
		list = slices.DeleteFunc(list, func(e any) bool { return entryKey(e, "name") == u.Name })
		entry := map[string]any{"name": u.Name, "contents": u.Contents}
		if u.Enabled {
			entry["enabled"] = true
		}
		return append(list, entry)
	}
	i := slices.IndexFunc(list, func(e any) bool { return entryKey(e, "name") == u.Name })
	if i < 0 {
		list = append(list, map[string]any{"name": u.Name})
		i = len(list) - 1
	}
	entry, _ := list[i].(map[string]any)
	dropins, _ := entry["dropins"].([]any)
	for _, d := range u.Dropins {
		dropins = slices.DeleteFunc(dropins, func(e any) bool { return entryKey(e, "name") == d.Name })
		dropins = append(dropins, map[string]any{"name": d.Name, "contents": d.Contents})
	}
	entry["dropins"] = dropins
	return list
}
