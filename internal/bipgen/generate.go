// Package bipgen generates realistic bootstrap-in-place Ignition configs, shaped like the
// bootstrap-in-place-for-live-iso.ign of `openshift-install create
// single-node-ignition-config`: the same units, scripts, manifests, kubeconfigs and TLS
// material, of realistic size and incompressibility, reproducible from a seed. Tests and
// benchmarks use them where a real installer output would carry a cluster's secrets.
package bipgen

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Options choose the generated config.
type Options struct {
	// Size is the exact length in bytes of the JSON output, reached by adding manifests and
	// key pairs; 0 means the installer's structure alone. A size below that structure is an
	// error that gives the minimum.
	Size int
	// Seed makes the output: the same options give the same bytes.
	Seed uint64
	// Version is the Ignition spec version, "3.0.0" to "3.5.0"; empty means "3.2.0", the
	// version openshift-install writes.
	Version string
	// Disk is the installation disk of the installer's install-to-disk.sh; empty means
	// /dev/sda.
	Disk string
}

// The JSON shape of the installer's output, for the fields used here; it is the same in
// every 3.x spec version.
type config struct {
	Ignition ignitionSection `json:"ignition"`
	Passwd   struct {
		Users []user `json:"users"`
	} `json:"passwd"`
	Storage struct {
		Files []file `json:"files"`
	} `json:"storage"`
	Systemd struct {
		Units []unit `json:"units"`
	} `json:"systemd"`
}

type ignitionSection struct {
	Config   map[string]any `json:"config"`
	Proxy    map[string]any `json:"proxy,omitempty"`
	Security map[string]any `json:"security"`
	Timeouts map[string]any `json:"timeouts"`
	Version  string         `json:"version"`
}

type user struct {
	Name              string   `json:"name"`
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys"`
}

type file struct {
	Overwrite bool              `json:"overwrite"`
	Path      string            `json:"path"`
	User      map[string]string `json:"user"`
	Contents  contents          `json:"contents"`
	Mode      int               `json:"mode"`
}

type contents struct {
	Compression  string   `json:"compression,omitempty"`
	Source       string   `json:"source"`
	Verification struct{} `json:"verification"`
}

type unit struct {
	Contents string `json:"contents"`
	Enabled  *bool  `json:"enabled,omitempty"`
	Name     string `json:"name"`
}

var supportedVersions = []string{"3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"}

// Generate returns the config as compact JSON, as openshift-install writes it.
func Generate(opts Options) ([]byte, error) {
	if opts.Version == "" {
		opts.Version = "3.2.0"
	}
	if !contains(supportedVersions, opts.Version) {
		return nil, fmt.Errorf("Ignition spec version %q: choose one of %s", opts.Version, strings.Join(supportedVersions, ", "))
	}
	if opts.Disk == "" {
		opts.Disk = "/dev/sda"
	}
	if opts.Size < 0 {
		return nil, fmt.Errorf("size %d is negative", opts.Size)
	}
	g := &generator{e: newEntropy(opts.Seed, "content"), disk: opts.Disk}
	if err := g.base(opts); err != nil {
		return nil, err
	}
	if opts.Size == 0 {
		return json.Marshal(g.cfg)
	}
	return g.fill(opts.Size)
}

type generator struct {
	e   entropy
	cfg config
	// issuers sign every certificate; the first is the root CA.
	issuers []*issuer
	// extra counts the manifests and key pairs added to reach the size.
	extra int
	// padBytes is the random text of the padding manifest.
	padBytes []byte
	disk     string
}

func (g *generator) addFile(path string, mode int, data []byte, compress bool) {
	c := contents{Source: "data:;base64," + base64.StdEncoding.EncodeToString(data)}
	if compress {
		// The installer gzips large files when that makes them smaller.
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		_, _ = zw.Write(data)
		_ = zw.Close()
		if z.Len() < len(data) {
			c = contents{Compression: "gzip", Source: "data:;base64," + base64.StdEncoding.EncodeToString(z.Bytes())}
		}
	}
	g.cfg.Storage.Files = append(g.cfg.Storage.Files, file{
		Overwrite: true, Path: path, User: map[string]string{"name": "root"}, Contents: c, Mode: mode,
	})
}

// The modes openshift-install gives: scripts 0555, manifests 0644, secrets 0600.
const (
	modeScript   = 0o555
	modeManifest = 0o644
	modeSecret   = 0o600
)

// tlsPairs are key pairs of the installer's /opt/openshift/tls (a subset, so that the
// structure alone stays under 150 KB), each with whether it is a CA and its size.
var tlsPairs = []struct {
	name string
	ca   bool
	bits int
}{
	{"admin-kubeconfig-signer", true, 2048}, {"aggregator-ca", true, 2048}, {"apiserver-proxy", false, 2048},
	{"etcd-signer", true, 2048}, {"journal-gatewayd", false, 2048}, {"kube-apiserver-internal-lb-server", false, 2048},
	{"kube-apiserver-lb-server", false, 2048}, {"kube-apiserver-localhost-server", false, 2048},
	{"kube-apiserver-service-network-server", false, 2048}, {"kube-control-plane-signer", true, 2048},
	{"kubelet-client", false, 2048}, {"kubelet-signer", true, 2048}, {"machine-config-server", false, 2048},
	{"service-account", false, 4096},
}

func (g *generator) base(opts Options) error {
	g.cfg.Ignition = ignitionSection{
		Config:   map[string]any{"replace": map[string]any{"verification": map[string]any{}}},
		Security: map[string]any{"tls": map[string]any{}},
		Timeouts: map[string]any{},
		Version:  opts.Version,
	}
	if opts.Version != "3.0.0" { // proxy settings appeared in spec 3.1
		g.cfg.Ignition.Proxy = map[string]any{}
	}
	var err error
	if g.issuers, err = issuers(opts.Seed); err != nil {
		return err
	}
	root := g.issuers[0]

	bootstrapKey, err := g.keyPair("bootstrap-ssh", 4096, false)
	if err != nil {
		return err
	}
	g.cfg.Passwd.Users = []user{{Name: "core", SSHAuthorizedKeys: []string{
		g.e.sshEd25519("admin@sno.example.com"), sshRSA(bootstrapKey.public, "bootstrap"),
	}}}

	for _, u := range units() {
		enabled := u.enabled
		entry := unit{Contents: u.contents, Name: u.name}
		if enabled {
			entry.Enabled = &enabled
		}
		g.cfg.Systemd.Units = append(g.cfg.Systemd.Units, entry)
	}

	g.addFile("/usr/local/bin/bootkube.sh", modeScript, []byte(bootkubeScript()), true)
	g.addFile("/usr/local/bin/bootstrap-service-record.sh", modeScript, []byte(serviceRecordScript), false)
	g.addFile("/usr/local/bin/bootstrap-in-place.sh", modeScript, []byte(bootstrapInPlaceScript), false)
	g.addFile("/usr/local/bin/install-to-disk.sh", modeScript, []byte(installerInstallToDiskScript(opts.Disk)), false)
	g.addFile("/opt/openshift/bootstrap-in-place/master-update.fcc", modeSecret, []byte(masterUpdateFCC), false)
	g.addFile("/opt/openshift/bootstrap-in-place/bootstrap-in-place-post-reboot.sh", modeSecret, []byte(postRebootScript), false)
	g.addFile("/root/.docker/config.json", modeSecret, g.pullSecret(), false)
	g.addFile("/opt/openshift/release-image.txt", modeManifest,
		[]byte(fmt.Sprintf("quay.io/openshift-release-dev/ocp-release@sha256:%x\n", g.e.bytes(32))), false)
	g.addFile("/opt/openshift/master.ign", modeSecret, g.pointerIgnition(opts.Version, root), false)

	adminPair, err := g.keyPair("system:admin", 2048, false)
	if err != nil {
		return err
	}
	kubeletPair, err := g.keyPair("system:serviceaccount:openshift-machine-config-operator:node-bootstrapper", 2048, false)
	if err != nil {
		return err
	}
	g.addFile("/opt/openshift/auth/kubeconfig", modeSecret, kubeconfig("admin", "https://api.sno.example.com:6443", root, adminPair), false)
	g.addFile("/opt/openshift/auth/kubeconfig-loopback", modeSecret, kubeconfig("admin", "https://localhost:6443", root, adminPair), false)
	g.addFile("/opt/openshift/auth/kubeconfig-kubelet", modeSecret,
		kubeconfig("kubelet", "https://api-int.sno.example.com:6443", root, kubeletPair), false)

	for _, iss := range g.issuers {
		g.addFile("/opt/openshift/tls/"+iss.cert.Subject.CommonName+".key", modeSecret, iss.keyPEM(), false)
		g.addFile("/opt/openshift/tls/"+iss.cert.Subject.CommonName+".crt", modeManifest, iss.pem, false)
	}
	for _, p := range tlsPairs {
		pair, err := g.keyPair(p.name, p.bits, p.ca)
		if err != nil {
			return err
		}
		g.addFile("/opt/openshift/tls/"+p.name+".key", modeSecret, pair.key, false)
		g.addFile("/opt/openshift/tls/"+p.name+".crt", modeManifest, pair.cert, false)
	}

	for _, m := range g.manifests(root) {
		g.addFile(m.path, modeManifest, m.data, len(m.data) > 4096)
	}
	return nil
}

// keyPair makes a look-alike key pair signed by one of the real issuers in turn.
func (g *generator) keyPair(name string, bits int, ca bool) (keyPair, error) {
	parent := g.issuers[len(g.cfg.Storage.Files)%len(g.issuers)]
	return g.e.newKeyPair(name, bits, ca, parent)
}

func (g *generator) pullSecret() []byte {
	auths := map[string]any{}
	for _, registry := range []string{"cloud.openshift.com", "quay.io", "registry.connect.redhat.com", "registry.redhat.io"} {
		auths[registry] = map[string]string{
			"auth":  base64.StdEncoding.EncodeToString(g.e.bytes(700)),
			"email": "admin@sno.example.com",
		}
	}
	out, _ := json.Marshal(map[string]any{"auths": auths})
	return out
}

// pointerIgnition is a master pointer config: the machine config server and the root CA.
func (g *generator) pointerIgnition(version string, root *issuer) []byte {
	out, _ := json.Marshal(map[string]any{"ignition": map[string]any{
		"config": map[string]any{"merge": []map[string]string{{"source": "https://api-int.sno.example.com:22623/config/master"}}},
		"security": map[string]any{"tls": map[string]any{"certificateAuthorities": []map[string]string{
			{"source": "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(root.pem)},
		}}},
		"version": version,
	}})
	return out
}

func kubeconfig(userName, server string, root *issuer, client keyPair) []byte {
	return []byte(fmt.Sprintf(`clusters:
- cluster:
    certificate-authority-data: %s
    server: %s
  name: sno
contexts:
- context:
    cluster: sno
    user: %s
  name: %s
current-context: %s
preferences: {}
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
`, base64.StdEncoding.EncodeToString(root.pem), server, userName, userName, userName, userName,
		base64.StdEncoding.EncodeToString(client.cert), base64.StdEncoding.EncodeToString(client.key)))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
