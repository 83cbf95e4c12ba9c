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
	// NMStateFile and AgentConfigFile are optional: the node's network as an NMState
	// document, or as the agent-config.yaml of the agent-based installer (with one host).
	NMStateFile     = "nmstate.yaml"
	AgentConfigFile = "agent-config.yaml"
)

// Inputs are the inputs of the node directory dir: dir/bootstrap-in-place-for-live-iso.ign
// and, when it exists, dir/sno.yaml, whose paths are relative to it and must resolve inside
// dir (node.Load then refuses the node with an *OutsideError); dir/nmstate.yaml and
// dir/agent-config.yaml when they exist. Every file is read through ReadFileIn: one that
// leads outside dir is refused with a *LinkOutError.
func Inputs(dir string) node.Inputs {
	in := node.Inputs{
		IgnitionPath: filepath.Join(dir, IgnitionFile),
		ConfigPath:   filepath.Join(dir, ConfigFile),
		CheckConfig:  CheckConfined,
		ReadFile: func(path string, limit int64, what string) ([]byte, error) {
			return ReadFileIn(dir, path, limit, what)
		},
	}
	if _, err := os.Stat(in.ConfigPath); errors.Is(err, fs.ErrNotExist) {
		in.ConfigPath = ""
	}
	if p := filepath.Join(dir, NMStateFile); exists(p) {
		in.NetworkNMState = []string{p}
	}
	if p := filepath.Join(dir, AgentConfigFile); exists(p) {
		in.AgentConfigPath = p
	}
	return in
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// LoadConfig reads the sno.yaml of the node directory dir and checks that the files it
// names are inside dir.
func LoadConfig(dir string) (*coreos.Config, error) {
	path := filepath.Join(dir, ConfigFile)
	data, err := ReadFileIn(dir, path, coreos.MaxConfigFileSize, coreos.ConfigFileKind)
	if err != nil {
		return nil, err
	}
	cfg, err := coreos.ParseConfig(path, data)
	if err != nil {
		return nil, err
	}
	if err := CheckConfined(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}
