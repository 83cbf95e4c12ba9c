// Package kubevol lays out directories as the kubelet's atomic writer does for Secret and
// ConfigMap volumes, for tests of code that reads them: the files of each version in a
// directory ..TIMESTAMP, a ..data link to the current version, and each file a link through
// ..data. An update writes the next version whole, swaps ..data with a rename, and removes
// the previous version.
package kubevol

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DataLink names the current version.
const DataLink = "..data"

// Volume is one mounted Secret or ConfigMap.
type Volume struct {
	Dir     string
	version int
}

// New writes files (name → content; a name may have subdirectories) as the first version
// of a volume mounted at dir.
func New(dir string, files map[string]string) (*Volume, error) {
	v := &Volume{Dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := v.Update(files); err != nil {
		return nil, err
	}
	// The kubelet links each top-level entry through ..data.
	tops := map[string]bool{}
	for name := range files {
		top, _, _ := strings.Cut(name, "/")
		tops[top] = true
	}
	for top := range tops {
		if err := os.Symlink(filepath.Join(DataLink, top), filepath.Join(dir, top)); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Update makes files the volume's next version, in the kubelet's order; the top-level
// names must be those New was given.
func (v *Volume) Update(files map[string]string) error {
	v.version++
	name := fmt.Sprintf("..2026_12_01_08_00_%02d.%09d", v.version%60, v.version)
	dir := filepath.Join(v.Dir, name)
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(files[f]), 0o644); err != nil {
			return err
		}
	}
	old, _ := os.Readlink(filepath.Join(v.Dir, DataLink))
	tmp := filepath.Join(v.Dir, "..data_tmp")
	if err := os.Symlink(name, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(v.Dir, DataLink)); err != nil {
		return err
	}
	if old != "" {
		return os.RemoveAll(filepath.Join(v.Dir, old))
	}
	return nil
}
