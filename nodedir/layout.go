package nodedir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/node"
)

// The files of a node directory.
const (
	IgnitionFile = "bootstrap-in-place-for-live-iso.ign"
	ConfigFile   = "sno.yaml"
)

// Inputs are the inputs of the node directory dir: dir/bootstrap-in-place-for-live-iso.ign
// and, when it exists, dir/sno.yaml, whose paths are relative to it and must resolve inside
// dir (node.Load then refuses the node with an *OutsideError).
func Inputs(dir string) node.Inputs {
	in := node.Inputs{
		IgnitionPath: filepath.Join(dir, IgnitionFile),
		ConfigPath:   filepath.Join(dir, ConfigFile),
		CheckConfig:  CheckConfined,
	}
	if _, err := os.Stat(in.ConfigPath); errors.Is(err, fs.ErrNotExist) {
		in.ConfigPath = ""
	}
	return in
}

// LoadConfig reads the sno.yaml of the node directory dir and checks that the files it
// names are inside dir.
func LoadConfig(dir string) (*coreos.Config, error) {
	cfg, err := coreos.LoadConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	if err := CheckConfined(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}
