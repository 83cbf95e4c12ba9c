package coreos

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	v3_0 "github.com/coreos/ignition/v2/config/v3_0"
	t3_0 "github.com/coreos/ignition/v2/config/v3_0/types"
	v3_1 "github.com/coreos/ignition/v2/config/v3_1"
	t3_1 "github.com/coreos/ignition/v2/config/v3_1/types"
	v3_2 "github.com/coreos/ignition/v2/config/v3_2"
	t3_2 "github.com/coreos/ignition/v2/config/v3_2/types"
	v3_3 "github.com/coreos/ignition/v2/config/v3_3"
	t3_3 "github.com/coreos/ignition/v2/config/v3_3/types"
	v3_4 "github.com/coreos/ignition/v2/config/v3_4"
	t3_4 "github.com/coreos/ignition/v2/config/v3_4/types"
	v3_5 "github.com/coreos/ignition/v2/config/v3_5"
	t3_5 "github.com/coreos/ignition/v2/config/v3_5/types"
	"github.com/coreos/vcontext/report"
)

// Ignition is a parsed Ignition config held in the types of its own spec version, so that
// it is written back in that version: an RHCOS release boots only the versions its
// Ignition knows.
type Ignition struct {
	// Version is the config's spec version, e.g. "3.2.0".
	Version string
	spec    *specVersion
	config  any // *types.Config of spec's package
}

// Warning is a non-fatal finding about an input, with where it was found.
type Warning struct {
	// Path is the JSON path in the config ("$.storage.files.3.mode"), or the setting the
	// warning is about (DiskSetting).
	Path string
	// Line and Column locate the value in the input when known, else 0.
	Line, Column int
	Message      string
}

func (w Warning) String() string {
	switch {
	case w.Line > 0:
		return fmt.Sprintf("%s (line %d, column %d): %s", w.Path, w.Line, w.Column, w.Message)
	case w.Path != "":
		return w.Path + ": " + w.Message
	}
	return w.Message
}

// specVersion binds one Ignition spec version to its parser and to the one edit this
// package makes: replacing or adding a file and a unit, keyed by path and name.
type specVersion struct {
	version string
	parse   func(raw []byte) (config any, rpt report.Report, err error)
	// setFileAndUnit puts file and unit (JSON entries valid in every 3.x spec) into config,
	// replacing the entry with the same path or name, else appending; a nil unit is none.
	setFileAndUnit func(config any, file, unit []byte) error
}

// specVersions are the spec versions sno-iso reads and writes: every stable 3.x that the
// vendored Ignition knows. Experimental specs are left out on purpose: no released RHCOS
// boots them.
var specVersions = []*specVersion{
	newSpecVersion("3.0.0", v3_0.Parse, func(c *t3_0.Config) (*[]t3_0.File, *[]t3_0.Unit) { return &c.Storage.Files, &c.Systemd.Units },
		func(f *t3_0.File) string { return f.Path }, func(u *t3_0.Unit) string { return u.Name }),
	newSpecVersion("3.1.0", v3_1.Parse, func(c *t3_1.Config) (*[]t3_1.File, *[]t3_1.Unit) { return &c.Storage.Files, &c.Systemd.Units },
		func(f *t3_1.File) string { return f.Path }, func(u *t3_1.Unit) string { return u.Name }),
	newSpecVersion("3.2.0", v3_2.Parse, func(c *t3_2.Config) (*[]t3_2.File, *[]t3_2.Unit) { return &c.Storage.Files, &c.Systemd.Units },
		func(f *t3_2.File) string { return f.Path }, func(u *t3_2.Unit) string { return u.Name }),
	newSpecVersion("3.3.0", v3_3.Parse, func(c *t3_3.Config) (*[]t3_3.File, *[]t3_3.Unit) { return &c.Storage.Files, &c.Systemd.Units },
		func(f *t3_3.File) string { return f.Path }, func(u *t3_3.Unit) string { return u.Name }),
	newSpecVersion("3.4.0", v3_4.Parse, func(c *t3_4.Config) (*[]t3_4.File, *[]t3_4.Unit) { return &c.Storage.Files, &c.Systemd.Units },
		func(f *t3_4.File) string { return f.Path }, func(u *t3_4.Unit) string { return u.Name }),
	newSpecVersion("3.5.0", v3_5.Parse, func(c *t3_5.Config) (*[]t3_5.File, *[]t3_5.Unit) { return &c.Storage.Files, &c.Systemd.Units },
		func(f *t3_5.File) string { return f.Path }, func(u *t3_5.Unit) string { return u.Name }),
}

// SupportedIgnitionVersions lists the spec versions ParseIgnition accepts, oldest first.
func SupportedIgnitionVersions() []string {
	versions := make([]string, len(specVersions))
	for i, s := range specVersions {
		versions[i] = s.version
	}
	return versions
}

func newSpecVersion[C, F, U any](version string, parse func([]byte) (C, report.Report, error),
	lists func(*C) (*[]F, *[]U), filePath func(*F) string, unitName func(*U) string) *specVersion {
	return &specVersion{
		version: version,
		parse: func(raw []byte) (any, report.Report, error) {
			config, rpt, err := parse(raw)
			return &config, rpt, err
		},
		setFileAndUnit: func(config any, file, unit []byte) error {
			files, units := lists(config.(*C))
			if err := replaceOrAppend(files, file, filePath); err != nil {
				return fmt.Errorf("file entry: %w", err)
			}
			if unit == nil {
				return nil
			}
			if err := replaceOrAppend(units, unit, unitName); err != nil {
				return fmt.Errorf("unit entry: %w", err)
			}
			return nil
		},
	}
}

// replaceOrAppend decodes entry into the list's element type and puts it where the first
// element with the same key was (dropping any later duplicates), or at the end.
func replaceOrAppend[E any](list *[]E, entry []byte, key func(*E) string) error {
	var e E
	if err := json.Unmarshal(entry, &e); err != nil {
		return err
	}
	k := key(&e)
	var kept []E
	replaced := false
	for i := range *list {
		if key(&(*list)[i]) != k {
			kept = append(kept, (*list)[i])
		} else if !replaced {
			kept = append(kept, e)
			replaced = true
		}
	}
	if !replaced {
		kept = append(kept, e)
	}
	*list = kept
	return nil
}

// ParseIgnition parses and validates an Ignition config with the package of its own spec
// version. Fatal problems are returned as one error naming each JSON path; the warnings
// are the validator's non-fatal findings.
func ParseIgnition(raw []byte) (*Ignition, []Warning, error) {
	version, err := ignitionVersion(raw)
	if err != nil {
		return nil, nil, err
	}
	var spec *specVersion
	for _, s := range specVersions {
		if s.version == version {
			spec = s
		}
	}
	if spec == nil {
		return nil, nil, unsupportedVersionError(version)
	}
	config, rpt, err := spec.parse(raw)
	warnings, fatal := reportEntries(rpt)
	if err != nil {
		if len(fatal) == 0 {
			return nil, warnings, fmt.Errorf("invalid Ignition %s config: %w", version, err)
		}
		return nil, warnings, fmt.Errorf("invalid Ignition %s config: %s", version, strings.Join(fatal, "; "))
	}
	return &Ignition{Version: version, spec: spec, config: config}, warnings, nil
}

// ignitionVersion reads ignition.version, telling apart input that is not JSON at all
// from JSON that is not an Ignition config.
func ignitionVersion(raw []byte) (string, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return "", errors.New("not an Ignition config: the input is empty")
	}
	var stub struct {
		Ignition *struct {
			Version *string `json:"version"`
		} `json:"ignition"`
	}
	if err := json.Unmarshal(raw, &stub); err != nil {
		var syntaxErr *json.SyntaxError
		if errors.As(err, &syntaxErr) {
			line, col := lineColumn(raw, syntaxErr.Offset)
			return "", fmt.Errorf("not an Ignition config: not JSON: %v at line %d, column %d", err, line, col)
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			where := "the top-level value"
			if typeErr.Field != "" {
				where = typeErr.Field
			}
			expected := "an object"
			if typeErr.Type != nil && typeErr.Type.Kind() == reflect.String {
				expected = "a string"
			}
			return "", fmt.Errorf("not an Ignition config: %s is a JSON %s, not %s", where, typeErr.Value, expected)
		}
		return "", fmt.Errorf("not an Ignition config: %v", err)
	}
	if stub.Ignition == nil || stub.Ignition.Version == nil {
		return "", errors.New("not an Ignition config: JSON without ignition.version " +
			"(give the .ign file that openshift-install created, not a Butane or install-config file)")
	}
	return *stub.Ignition.Version, nil
}

func unsupportedVersionError(version string) error {
	err := fmt.Errorf("Ignition spec version %q is not supported: sno-iso reads %s to %s",
		version, specVersions[0].version, specVersions[len(specVersions)-1].version)
	switch {
	case strings.HasPrefix(version, "1.") || strings.HasPrefix(version, "2."):
		return fmt.Errorf("%w (spec %s configs come from OpenShift 4.5 and older, which have no bootstrap-in-place)", err, version)
	case strings.Contains(version, "experimental"):
		return fmt.Errorf("%w (experimental specs do not boot on released RHCOS)", err)
	}
	return err
}

// lineColumn turns a byte offset into a 1-based line and column.
func lineColumn(raw []byte, offset int64) (line, col int) {
	if offset > int64(len(raw)) {
		offset = int64(len(raw))
	}
	before := raw[:offset]
	line = 1 + strings.Count(string(before), "\n")
	col = int(offset) - strings.LastIndexByte(string(before), '\n')
	return line, col
}

// reportEntries splits a validation report into warnings and fatal messages, each with its
// JSON path.
func reportEntries(rpt report.Report) (warnings []Warning, fatal []string) {
	for _, e := range rpt.Entries {
		w := Warning{Path: e.Context.String(), Message: e.Message}
		if e.Marker.StartP != nil {
			w.Line, w.Column = int(e.Marker.StartP.Line), int(e.Marker.StartP.Column)
		}
		if e.Kind.IsFatal() {
			fatal = append(fatal, w.String())
		} else {
			w.Message = e.Kind.String() + ": " + w.Message
			warnings = append(warnings, w)
		}
	}
	return warnings, fatal
}

// Marshal writes the config as compact JSON in its own spec version.
func (ig *Ignition) Marshal() ([]byte, error) {
	return json.Marshal(ig.config)
}

// configView is the part of any 3.x config this package reads; the JSON shapes of these
// fields are the same in every 3.x spec.
type configView struct {
	Storage struct {
		Files []fileView `json:"files"`
	} `json:"storage"`
	Systemd struct {
		Units []unitView `json:"units"`
	} `json:"systemd"`
}

type fileView struct {
	Path     string `json:"path"`
	Contents struct {
		Source      *string `json:"source"`
		Compression *string `json:"compression"`
	} `json:"contents"`
}

type unitView struct {
	Name     string  `json:"name"`
	Enabled  *bool   `json:"enabled"`
	Contents *string `json:"contents"`
}

func (ig *Ignition) view() (configView, error) {
	var v configView
	raw, err := ig.Marshal()
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	return v, err
}

// IsBootstrapInPlace tells whether the config is openshift-install's bootstrap-in-place
// Ignition: it has the bootkube.service unit and content under /opt/openshift.
func (ig *Ignition) IsBootstrapInPlace() bool {
	v, err := ig.view()
	return err == nil && v.isBootstrapInPlace()
}

func (v configView) isBootstrapInPlace() bool {
	hasBootkube, hasAssets := false, false
	for _, u := range v.Systemd.Units {
		hasBootkube = hasBootkube || u.Name == BootkubeUnitName
	}
	for _, f := range v.Storage.Files {
		hasAssets = hasAssets || strings.HasPrefix(f.Path, "/opt/openshift/")
	}
	return hasBootkube && hasAssets
}

func (v configView) hasFile(path string) bool {
	for _, f := range v.Storage.Files {
		if f.Path == path {
			return true
		}
	}
	return false
}

// SetInstallToDisk writes the install-to-disk unit (enabled) and script for inst into a
// bootstrap-in-place config, replacing the installer's ones or adding them when absent.
// Every other file, unit and user is left as it was. The script records its stages when the
// config carries the installer's service-record library. The result is validated again in
// the config's spec version.
func (ig *Ignition) SetInstallToDisk(inst Installation) error {
	return ig.setInstallToDisk(inst, false)
}

// setInstallToDisk is SetInstallToDisk; with report, the script reports the install's start
// and end through the progress hooks.
func (ig *Ignition) setInstallToDisk(inst Installation, report bool) error {
	if _, err := inst.Validate(); err != nil {
		return err
	}
	v, err := ig.view()
	if err != nil || !v.isBootstrapInPlace() {
		return ErrNotBootstrapInPlace
	}
	script := renderInstallToDiskScript(inst, v.hasFile(ServiceRecordScriptPath), report)
	file, err := json.Marshal(map[string]any{
		"path":      InstallToDiskScriptPath,
		"overwrite": true,
		"mode":      installToDiskScriptMode,
		"contents": map[string]any{
			"source": "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(script)),
		},
	})
	if err != nil {
		return err
	}
	unit, err := json.Marshal(map[string]any{
		"name":     InstallToDiskUnitName,
		"enabled":  true,
		"contents": RenderInstallToDiskUnit(),
	})
	if err != nil {
		return err
	}
	if err := ig.spec.setFileAndUnit(ig.config, file, unit); err != nil {
		return fmt.Errorf("setting install-to-disk in the Ignition %s config: %w", ig.Version, err)
	}
	out, err := ig.Marshal()
	if err != nil {
		return err
	}
	if _, rpt, err := ig.spec.parse(out); err != nil {
		_, fatal := reportEntries(rpt)
		return fmt.Errorf("the Ignition %s config with install-to-disk set is invalid: %v %s", ig.Version, err, strings.Join(fatal, "; "))
	}
	return nil
}

// ErrNotBootstrapInPlace says that an Ignition config is not the bootstrap-in-place config
// of a single-node cluster; LiveIgnitionOptions.AllowAnyIgnition embeds such a config as it is.
var ErrNotBootstrapInPlace = errors.New("not a bootstrap-in-place Ignition config: it lacks the bootkube.service unit " +
	"or the /opt/openshift files; give the bootstrap-in-place-for-live-iso.ign from " +
	"`openshift-install create single-node-ignition-config`")
