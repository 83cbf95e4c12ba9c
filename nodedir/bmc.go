package nodedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sno-iso/sno-iso/internal/input"
)

// BMC is the BMC a node's sno.yaml names, and the System on it.
type BMC struct {
	// Node is the node's name: its directory's.
	Node string
	// Dir is the node directory, which CredentialsFile and CAFile are inside.
	Dir string
	// Address is the Redfish address as written in sno.yaml.
	Address  string
	SystemID string
	Insecure bool
	// CredentialsFile is the account's file inside the node directory; "" when not set.
	CredentialsFile string
	// CAFile is the PEM CA of the BMC's certificate; "" when not set.
	CAFile string
	// Config is the sno.yaml the values come from, for messages that name its keys.
	Config string
	// EjectAfterInstall is sno.yaml's bmc.ejectAfterInstall; nil when not set.
	EjectAfterInstall *bool
}

// ErrNoBMC is wrapped by LoadBMC's error for a node whose sno.yaml has no bmc section.
var ErrNoBMC = errors.New("no bmc section")

// LoadBMC reads the BMC target of the node directory dir from its sno.yaml.
func LoadBMC(dir string) (*BMC, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	if cfg.BMC == nil {
		return nil, fmt.Errorf("%s has %w", cfg.Path, ErrNoBMC)
	}
	return &BMC{
		Node:              filepath.Base(filepath.Clean(dir)),
		Dir:               dir,
		Address:           cfg.BMC.Address,
		SystemID:          cfg.BMC.SystemID,
		Insecure:          cfg.BMC.Insecure,
		CredentialsFile:   cfg.BMC.CredentialsFile,
		CAFile:            cfg.BMC.CAFile,
		Config:            cfg.Path,
		EjectAfterInstall: cfg.BMC.EjectAfterInstall,
	}, nil
}

// Credentials are a BMC account.
type Credentials struct {
	Username, Password string
}

// MaxCredentialsFile bounds a credentials file; real ones are a few dozen bytes.
const MaxCredentialsFile = 64 << 10

// ErrBadCredentials is wrapped by ReadCredentials' error for a file without both keys set.
// The error never quotes the file, which holds the password.
var ErrBadCredentials = errors.New("must be YAML with exactly the keys username: and password:, both set")

// ReadCredentials reads a BMC account in the keys of a Metal3 BMC Secret, username and
// password: a YAML file with exactly those keys (what `oc extract` gives fits without
// renaming), or a directory holding one file per key (the Secret mounted as a volume; a
// final newline is dropped). exposed reports that other users may read the file.
func ReadCredentials(path string) (c Credentials, exposed bool, err error) {
	return readCredentials(fileSystem{}, path)
}

// ReadCredentialsIn reads the BMC account at path as ReadCredentials does, only from inside
// the node directory dir (OpenIn): a file, or a file of the directory, that leads outside it
// is refused with a *LinkOutError.
func ReadCredentialsIn(dir, path string) (c Credentials, exposed bool, err error) {
	return readCredentials(nodeFiles(dir), path)
}

// files opens and stats the files of credentials: anywhere, or inside a node directory.
type files interface {
	open(path, what string) (*os.File, fs.FileInfo, error)
	stat(path string) (fs.FileInfo, error)
}

type fileSystem struct{}

func (fileSystem) open(path, what string) (*os.File, fs.FileInfo, error) {
	return input.OpenRegular(path, what)
}
func (fileSystem) stat(path string) (fs.FileInfo, error) { return os.Stat(path) }

type nodeFiles string

func (dir nodeFiles) open(path, what string) (*os.File, fs.FileInfo, error) {
	return OpenIn(string(dir), path, what)
}
func (dir nodeFiles) stat(path string) (fs.FileInfo, error) { return statIn(string(dir), path) }

func readCredentials(fsys files, path string) (c Credentials, exposed bool, err error) {
	info, err := fsys.stat(path)
	var outside *LinkOutError
	if errors.As(err, &outside) {
		return Credentials{}, false, fmt.Errorf("credentials file: %w", err)
	}
	if err == nil && info.IsDir() {
		return readCredentialsDir(fsys, path)
	}
	const what = "a credentials file"
	f, info, err := fsys.open(path, what)
	if err != nil {
		return Credentials{}, false, fmt.Errorf("credentials file: %w", err)
	}
	defer f.Close()
	exposed = info.Mode().IsRegular() && info.Mode().Perm()&0o077 != 0
	data, err := input.Read(f, path, MaxCredentialsFile, what+" (username: and password:)")
	if err != nil {
		return Credentials{}, exposed, fmt.Errorf("credentials file: %w", err)
	}
	var file struct {
		Username string `yaml:"username"`
		Password string `yaml:"password"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	// The parser's message may quote the file, which holds the password: it is not shown.
	if err := dec.Decode(&file); err != nil || file.Username == "" || file.Password == "" {
		return Credentials{}, exposed, fmt.Errorf("credentials file %s %w", path, ErrBadCredentials)
	}
	return Credentials{Username: file.Username, Password: file.Password}, exposed, nil
}

// readCredentialsDir reads dir/username and dir/password, a mounted Secret's files.
func readCredentialsDir(fsys files, dir string) (c Credentials, exposed bool, err error) {
	read := func(name string) (string, error) {
		path := filepath.Join(dir, name)
		f, info, err := fsys.open(path, "a credentials file")
		if err != nil {
			return "", err
		}
		defer f.Close()
		exposed = exposed || info.Mode().Perm()&0o077 != 0
		data, err := input.Read(f, path, MaxCredentialsFile, "a credentials file")
		return strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r"), err
	}
	if c.Username, err = read("username"); err == nil {
		c.Password, err = read("password")
	}
	if errors.Is(err, fs.ErrNotExist) || err == nil && (c.Username == "" || c.Password == "") {
		return Credentials{}, exposed, fmt.Errorf("credentials directory %s must hold the files username and password, both set", dir)
	}
	if err != nil {
		return Credentials{}, exposed, fmt.Errorf("credentials file: %w", err)
	}
	return c, exposed, nil
}
