package coreos

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// What coreos-installer's `iso customize` and `pxe customize` add to a live config besides
// the install settings: more live Ignition configs, certificate authorities that Ignition
// trusts, and scripts run before and after the install. sno-iso adds them to the
// bootstrap-in-place config, whose install-to-disk is the install.

// InstallScript is a script the live system runs before or after coreos-installer writes the
// installation disk (coreos-installer's --pre-install and --post-install).
type InstallScript struct {
	// Name is the script's file name: it is written 0700 as /usr/local/bin/pre-install-Name
	// (or post-install-Name), the paths coreos-installer uses.
	Name string
	Data []byte
}

// LiveFragment is an Ignition config merged into the live config, as coreos-installer merges
// --live-ignition: an inline ignition.config.merge entry, fetched and merged by Ignition in
// the live system.
type LiveFragment struct {
	// Source names the fragment in messages.
	Source string
	Data   []byte
}

// installScriptPath is where the live config puts a pre- or post-install script.
func installScriptPath(kind, name string) string {
	return "/usr/local/bin/" + kind + "-install-" + name
}

// checkScriptName refuses a name that is not one plain file name.
func checkScriptName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("install script name %q is not a file name", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("install script name %q holds a control character", name)
		}
	}
	return nil
}

// ErrNotCertificate says that an Ignition CA bundle holds no PEM certificate.
var ErrNotCertificate = errors.New("no PEM certificate (-----BEGIN CERTIFICATE-----) in it")

// CheckCABundle accepts a PEM bundle of one or more certificates, the format Ignition reads
// for ignition.security.tls.certificateAuthorities.
func CheckCABundle(data []byte) error {
	found := false
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("a certificate of the bundle: %w", err)
		}
		found = true
	}
	if !found {
		return ErrNotCertificate
	}
	return nil
}

// caCustomization is the installed node's share of the CAs: its Ignition trusts them too,
// through the master MachineConfig (where the installer's own pointer customization keeps
// its CA).
func caCustomization(cas [][]byte) (*Customization, error) {
	var sources []map[string]any
	for _, ca := range cas {
		sources = append(sources, map[string]any{"source": dataURL(ca)})
	}
	fragment, err := json.Marshal(map[string]any{"ignition": map[string]any{
		"version":  "3.2.0",
		"security": map[string]any{"tls": map[string]any{"certificateAuthorities": sources}},
	}})
	if err != nil {
		return nil, err
	}
	return ParseCustomization("the Ignition CAs", fragment)
}

func dataURL(data []byte) string {
	return "data:;base64," + base64.StdEncoding.EncodeToString(data)
}

// installScriptPaths are the live paths of scripts of kind (pre or post), refused when two
// share a name.
func installScriptPaths(kind string, scripts []InstallScript) ([]string, error) {
	var paths []string
	for _, s := range scripts {
		if err := checkScriptName(s.Name); err != nil {
			return nil, err
		}
		p := installScriptPath(kind, s.Name)
		for _, q := range paths {
			if q == p {
				return nil, fmt.Errorf("two %s-install scripts are named %s: rename one", kind, s.Name)
			}
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// addLiveAdditions adds to raw, a valid config of its spec version, the install scripts as
// 0700 files (root's, Ignition's default owner), the CAs to
// ignition.security.tls.certificateAuthorities and the fragments to ignition.config.merge,
// each inline as a data URL, in the order given. A script's path that the config already
// has is refused. The result is validated in the config's spec version and written in it.
func addLiveAdditions(raw []byte, pre, post []InstallScript, cas [][]byte, fragments []LiveFragment) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var config map[string]any
	if err := dec.Decode(&config); err != nil {
		return nil, err
	}
	var view configView
	if err := json.Unmarshal(raw, &view); err != nil {
		return nil, err
	}
	storage := childObject(config, "storage")
	files, _ := storage["files"].([]any)
	for _, list := range []struct {
		kind    string
		scripts []InstallScript
	}{{"pre", pre}, {"post", post}} {
		for _, s := range list.scripts {
			path := installScriptPath(list.kind, s.Name)
			if view.hasFile(path) {
				return nil, fmt.Errorf("the live config already has a file %s: rename the %s-install script %s", path, list.kind, s.Name)
			}
			files = append(files, map[string]any{"path": path, "mode": 0o700, "contents": map[string]any{"source": dataURL(s.Data)}})
		}
	}
	if len(files) > 0 {
		storage["files"] = files
	}
	ignition := childObject(config, "ignition")
	if len(cas) > 0 {
		tls := childObject(childObject(ignition, "security"), "tls")
		list, _ := tls["certificateAuthorities"].([]any)
		for _, ca := range cas {
			list = append(list, map[string]any{"source": dataURL(ca)})
		}
		tls["certificateAuthorities"] = list
	}
	if len(fragments) > 0 {
		sources := childObject(ignition, "config")
		list, _ := sources["merge"].([]any)
		for _, f := range fragments {
			list = append(list, map[string]any{"source": dataURL(f.Data)})
		}
		sources["merge"] = list
	}
	edited, err := json.Marshal(config)
	if err != nil {
		return nil, err
	}
	ig, _, err := ParseIgnition(edited)
	if err != nil {
		return nil, fmt.Errorf("the live config with the additions: %w", err)
	}
	return ig.Marshal()
}

// childObject is parent[key] as an object, created when absent.
func childObject(parent map[string]any, key string) map[string]any {
	child, _ := parent[key].(map[string]any)
	if child == nil {
		child = map[string]any{}
		parent[key] = child
	}
	return child
}
