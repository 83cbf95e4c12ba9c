package nodedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/bipgen"
	"github.com/sno-iso/sno-iso/node"
)

const installation = "coreOSInstallation:\n  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3\n"

const keyfile = "[connection]\nid=eth0\ntype=ethernet\ninterface-name=eth0\n\n[ipv4]\nmethod=auto\n"

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// nodesDir makes a nodes directory with the node "sno": its Ignition, sno.yaml and eth0's
// keyfile, and a keyfile beside the nodes that no node owns.
func nodesDir(t *testing.T, snoYAML string) (nodes, dir string) {
	t.Helper()
	nodes = filepath.Join(t.TempDir(), "nodes")
	dir = filepath.Join(nodes, "sno")
	bip, err := bipgen.Generate(bipgen.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, IgnitionFile), string(bip))
	write(t, filepath.Join(dir, ConfigFile), installation+snoYAML)
	write(t, filepath.Join(dir, "eth0.nmconnection"), keyfile)
	write(t, filepath.Join(nodes, "other", "eth0.nmconnection"), keyfile)
	return nodes, dir
}

// TestClosedWorld: a node's sno.yaml names files inside its directory only; ../, an absolute
// path elsewhere and a symbolic link out are refused with an error naming the key and the
// file, before any of them is read.
func TestClosedWorld(t *testing.T) {
	for _, tc := range []struct {
		name, snoYAML, key string
		link               bool
	}{
		{"dotdot", "network:\n  keyfiles: [eth0.nmconnection, ../other/eth0.nmconnection]\n", "network.keyfiles[1]", false},
		{"absolute", "network:\n  keyfiles: [OTHER/eth0.nmconnection]\n", "network.keyfiles[0]", false},
		{"link", "network:\n  keyfiles: [escape.nmconnection]\n", "network.keyfiles[0]", true},
		{"customization", "customizations: [sub/../../other/eth0.nmconnection]\n", "customizations[0]", false},
		{"credentials", "bmc:\n  address: https://192.0.2.1\n  credentialsFile: /etc/passwd\n", "bmc.credentialsFile", false},
		{"ca", "bmc:\n  address: https://192.0.2.1\n  caFile: ../other/eth0.nmconnection\n", "bmc.caFile", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes, dir := nodesDir(t, "")
			write(t, filepath.Join(dir, ConfigFile), installation+strings.ReplaceAll(tc.snoYAML, "OTHER", filepath.Join(nodes, "other")))
			if err := os.Symlink(filepath.Join(nodes, "other", "eth0.nmconnection"), filepath.Join(dir, "escape.nmconnection")); err != nil {
				t.Fatal(err)
			}
			_, _, err := node.Load(Inputs(dir))
			var outside *OutsideError
			if !errors.As(err, &outside) {
				t.Fatalf("node.Load: %v, want an *OutsideError", err)
			}
			if outside.Key != tc.key || outside.Dir != dir || (outside.Target != "") != tc.link {
				t.Errorf("got %+v, want key %s in %s (through a link: %v)", outside, tc.key, dir, tc.link)
			}
			for _, want := range []string{filepath.Join(dir, ConfigFile), tc.key, outside.File, "outside the node directory"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not name %q: %v", want, err)
				}
			}
			if _, err := LoadConfig(dir); !errors.As(err, &outside) {
				t.Errorf("LoadConfig: %v, want an *OutsideError", err)
			}
		})
	}
}

// TestClosedWorldInside: files inside the directory, also through a link that stays inside or
// a directory that is itself a link, are the node's.
func TestClosedWorldInside(t *testing.T) {
	_, dir := nodesDir(t, "network:\n  keyfiles: [eth0.nmconnection, ./net/alias.nmconnection]\n")
	write(t, filepath.Join(dir, "net", "keep"), "")
	if err := os.Symlink("../eth0.nmconnection", filepath.Join(dir, "net", "alias.nmconnection")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := node.Load(Inputs(dir)); err != nil {
		t.Fatalf("a node whose files are inside its directory: %v", err)
	}
	linked := filepath.Join(t.TempDir(), "sno-link")
	if err := os.Symlink(dir, linked); err != nil {
		t.Fatal(err)
	}
	if _, _, err := node.Load(Inputs(linked)); err != nil {
		t.Fatalf("a node directory reached through a link: %v", err)
	}
}

func TestLoadBMC(t *testing.T) {
	_, dir := nodesDir(t, "bmc:\n  address: https://192.0.2.1\n  credentialsFile: bmc.yaml\n  systemID: S1\n  insecure: true\n")
	b, err := LoadBMC(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := BMC{Node: "sno", Dir: dir, Address: "https://192.0.2.1", SystemID: "S1", Insecure: true, CredentialsFile: filepath.Join(dir, "bmc.yaml"),
		Config: filepath.Join(dir, ConfigFile)}
	if *b != want {
		t.Errorf("got %+v, want %+v", *b, want)
	}
	_, plain := nodesDir(t, "")
	if _, err := LoadBMC(plain); !errors.Is(err, ErrNoBMC) || !strings.Contains(err.Error(), ConfigFile) {
		t.Errorf("a node without bmc: %v, want ErrNoBMC naming its sno.yaml", err)
	}
}

// TestReadCredentials: the keys of a Metal3 BMC Secret, as a YAML file or as a mounted
// Secret's directory; anything else is refused without quoting the password.
func TestReadCredentials(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bmc.yaml")
	write(t, file, "username: admin\npassword: s3cr3t-pw\n")
	if c, exposed, err := ReadCredentials(file); err != nil || c != (Credentials{"admin", "s3cr3t-pw"}) || exposed {
		t.Errorf("YAML file: %+v, exposed %v, %v", c, exposed, err)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, exposed, _ := ReadCredentials(file); !exposed {
		t.Error("a world-readable file is not reported")
	}
	secret := filepath.Join(dir, "secret")
	write(t, filepath.Join(secret, "username"), "admin\n")
	write(t, filepath.Join(secret, "password"), "s3cr3t-pw")
	if c, _, err := ReadCredentials(secret); err != nil || c != (Credentials{"admin", "s3cr3t-pw"}) {
		t.Errorf("mounted Secret: %+v, %v", c, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	write(t, bad, "user: admin\npass: s3cr3t-pw\n")
	if _, _, err := ReadCredentials(bad); !errors.Is(err, ErrBadCredentials) || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("wrong keys: %v", err)
	}
	half := filepath.Join(dir, "half")
	write(t, filepath.Join(half, "username"), "admin")
	if _, _, err := ReadCredentials(half); err == nil || !strings.Contains(err.Error(), "username and password") {
		t.Errorf("a Secret without password: %v", err)
	}
}

// TestServedURLs: the URLs a server over the nodes directory publishes, from the secret it
// keeps there or the one given, or plain for an open server.
func TestServedURLs(t *testing.T) {
	nodes, dir := nodesDir(t, "")
	if _, err := ServedURLs("http://h", dir, Access{}); !errors.Is(err, capability.ErrNoSecret) {
		t.Fatalf("before serve made its secret: %v", err)
	}
	secret, _, err := capability.LoadOrCreateSecret(capability.SecretPath(nodes))
	if err != nil {
		t.Fatal(err)
	}
	urls, err := ServedURLs("http://10.0.0.1:8080", dir+"/", Access{})
	if want := capability.NodeURLs("http://10.0.0.1:8080", secret, "sno"); err != nil || urls != want {
		t.Errorf("got %+v, %v; want %+v", urls, err, want)
	}
	if urls, err := ServedURLs("http://h", "elsewhere/sno", Access{SecretFile: capability.SecretPath(nodes)}); err != nil ||
		!strings.Contains(urls.ISO, capability.Token(secret.Key, "sno")) {
		t.Errorf("with the secret file given: %+v, %v", urls, err)
	}
	if urls, err := ServedURLs("http://h", "elsewhere/sno", Access{Open: true}); err != nil || urls.ISO != "http://h/sno.iso" {
		t.Errorf("open: %+v, %v", urls, err)
	}
}

// TestClosedWorldThroughLinks: every file of a node is read from inside its directory. The
// standard files (which no sno.yaml key names), a named file inside a linked-out directory and
// the files of a credentials directory that are links out are refused with an error that names
// the file and says it leads outside the node directory; the outside file is never read.
// (CheckConfined refuses a named file that is a link out sooner; see TestClosedWorld.)
func TestClosedWorldThroughLinks(t *testing.T) {
	const nmstateDoc = "interfaces:\n- {name: eth0, type: ethernet, ipv4: {enabled: true, dhcp: true}}\n"
	const agentConfig = "kind: AgentConfig\nhosts:\n- hostname: sno\n"
	for _, tc := range []struct {
		name, snoYAML, file, content string
		bmc                          bool
	}{
		{"ignition", "", IgnitionFile, "", false},
		{"sno.yaml", "", ConfigFile, installation, false},
		{"nmstate", "", NMStateFile, nmstateDoc, false},
		{"agent-config", "", AgentConfigFile, agentConfig, false},
		{"keyfile in a subdirectory", "network:\n  keyfiles: [net/eth1.nmconnection]\n", "net/eth1.nmconnection", keyfile, false},
		{"customization", "customizations: [mc/extra.yaml]\n", "mc/extra.yaml", "{\"ignition\":{\"version\":\"3.2.0\"}}", false},
		{"credentials directory", "bmc:\n  address: https://192.0.2.1\n  credentialsFile: creds\n", "creds/password", "OUTSIDE-SECRET", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes, dir := nodesDir(t, tc.snoYAML)
			outside := filepath.Join(nodes, "..", "outside-"+filepath.Base(tc.file))
			content := tc.content
			if tc.file == IgnitionFile {
				data, err := os.ReadFile(filepath.Join(dir, IgnitionFile))
				if err != nil {
					t.Fatal(err)
				}
				content = string(data)
			}
			write(t, outside, content)
			link := filepath.Join(dir, tc.file)
			os.Remove(link)
			write(t, filepath.Join(filepath.Dir(link), "keep"), "")
			write(t, filepath.Join(dir, "creds", "username"), "admin\n")
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			var err error
			if tc.bmc {
				_, _, err = ReadCredentialsIn(dir, filepath.Join(dir, "creds"))
			} else {
				// Without CheckConfined, as when a link appears after it looked: the read itself
				// stays inside.
				in := Inputs(dir)
				in.CheckConfig = nil
				_, _, err = node.Load(in)
			}
			var linkOut *LinkOutError
			if !errors.As(err, &linkOut) || linkOut.File != link {
				t.Fatalf("got %v, want a *LinkOutError for %s", err, link)
			}
			if !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "leads outside the node directory") ||
				strings.Contains(err.Error(), "OUTSIDE-SECRET") {
				t.Errorf("the error does not name the file and the rule: %v", err)
			}
			if tc.file == ConfigFile {
				if _, err := LoadConfig(dir); !errors.As(err, &linkOut) {
					t.Errorf("LoadConfig: %v, want a *LinkOutError", err)
				}
			}
		})
	}
}

// TestCredentialsDirectoryLinksInside: a mounted Kubernetes Secret's files are links into
// its ..data directory, inside the node: they are read.
func TestCredentialsDirectoryLinksInside(t *testing.T) {
	_, dir := nodesDir(t, "")
	creds := filepath.Join(dir, "creds")
	write(t, filepath.Join(creds, "..2026_12_03", "username"), "admin\n")
	write(t, filepath.Join(creds, "..2026_12_03", "password"), "s3cr3t-pw\n")
	for _, link := range [][2]string{{"..2026_12_03", "..data"}, {"..data/username", "username"}, {"..data/password", "password"}} {
		if err := os.Symlink(link[0], filepath.Join(creds, link[1])); err != nil {
			t.Fatal(err)
		}
	}
	if c, _, err := ReadCredentialsIn(dir, creds); err != nil || c != (Credentials{"admin", "s3cr3t-pw"}) {
		t.Errorf("got %+v, %v", c, err)
	}
}
