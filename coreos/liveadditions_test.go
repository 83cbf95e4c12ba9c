package coreos

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	k8syaml "sigs.k8s.io/yaml"
)

func testCA(t *testing.T) []byte {
	t.Helper()
	cert, _ := fixtures.SelfSignedCert(t, t.TempDir())
	data, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPrepareLiveIgnitionAdditions: coreos-installer's customize additions land where its own
// customize puts them, in the bootstrap-in-place config's spec version: the scripts as 0700
// files run by install-to-disk.sh before and after coreos-installer, the CA in the live
// config's certificateAuthorities and in the installed node's MachineConfig, the fragments
// as inline ignition.config.merge entries in order.
func TestPrepareLiveIgnitionAdditions(t *testing.T) {
	ca := testCA(t)
	extra := []byte(`{"ignition":{"version":"3.1.0"},"storage":{"files":[{"path":"/etc/extra","contents":{"source":"data:,extra"}}]}}`)
	second := []byte(`{"ignition":{"version":"3.2.0"},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA"]}]}}`)
	for _, version := range []string{"3.1.0", "3.2.0"} {
		t.Run(version, func(t *testing.T) {
			out, _, err := PrepareLiveIgnition(bipConfig(t, version), LiveIgnitionOptions{
				Installation:  Installation{Disk: "/dev/vda"},
				PreInstall:    []InstallScript{{Name: "wipe.sh", Data: []byte("#!/bin/sh\necho pre\n")}},
				PostInstall:   []InstallScript{{Name: "notify", Data: []byte("#!/bin/sh\necho post\n")}},
				IgnitionCAs:   [][]byte{ca},
				LiveFragments: []LiveFragment{{Source: "extra.ign", Data: extra}, {Source: "second.ign", Data: second}},
			})
			if err != nil {
				t.Fatal(err)
			}
			files, _, _, gotVersion := entries(t, out)
			if gotVersion != version {
				t.Errorf("the live config is %s, want the input's %s", gotVersion, version)
			}
			for path, want := range map[string]string{
				"/usr/local/bin/pre-install-wipe.sh": "#!/bin/sh\necho pre\n", "/usr/local/bin/post-install-notify": "#!/bin/sh\necho post\n",
			} {
				f, _ := files[path].(map[string]any)
				if f == nil {
					t.Fatalf("no %s in the live config", path)
				}
				if mode := f["mode"].(float64); mode != 0o700 {
					t.Errorf("%s mode %o, want 0700", path, int(mode))
				}
				if got := decodeDataURL(t, f["contents"].(map[string]any)["source"].(string)); got != want {
					t.Errorf("%s holds %q", path, got)
				}
			}
			script := decodeDataURL(t, files[InstallToDiskScriptPath].(map[string]any)["contents"].(map[string]any)["source"].(string))
			pre := strings.Index(script, "run_install_script pre '/usr/local/bin/pre-install-wipe.sh'")
			install := strings.Index(script, "coreos-installer install")
			post := strings.Index(script, "run_install_script post '/usr/local/bin/post-install-notify'")
			reboot := strings.Index(script, "shutdown -r")
			if pre < 0 || !(pre < install && install < post && post < reboot) {
				t.Errorf("install-to-disk.sh runs pre at %d, installs at %d, post at %d, reboots at %d:\n%s", pre, install, post, reboot, script)
			}
			info, err := InspectIgnition(out)
			if err != nil || !slices.Equal(info.Installation.PreInstall, []string{"/usr/local/bin/pre-install-wipe.sh"}) ||
				!slices.Equal(info.Installation.PostInstall, []string{"/usr/local/bin/post-install-notify"}) {
				t.Errorf("inspect reads the scripts as %+v (%v)", info, err)
			}
			var live struct {
				Ignition struct {
					Config   struct{ Merge []struct{ Source string } }
					Security struct {
						TLS struct{ CertificateAuthorities []struct{ Source string } }
					}
				}
			}
			if err := json.Unmarshal(out, &live); err != nil {
				t.Fatal(err)
			}
			merge := live.Ignition.Config.Merge
			if len(merge) != 2 || decodeDataURL(t, merge[0].Source) != string(extra) || decodeDataURL(t, merge[1].Source) != string(second) {
				t.Errorf("ignition.config.merge is %+v, want the two fragments in order", merge)
			}
			cas := live.Ignition.Security.TLS.CertificateAuthorities
			if len(cas) != 1 || decodeDataURL(t, cas[0].Source) != string(ca) {
				t.Errorf("the live config trusts %+v, want the CA", cas)
			}
			manifest, ok := files[CustomizationManifestPath(RoleMaster)].(map[string]any)
			if !ok {
				t.Fatal("no master MachineConfig carries the CA to the installed node")
			}
			var mc mcfgv1.MachineConfig
			if err := k8syaml.UnmarshalStrict([]byte(decodeDataURL(t, manifest["contents"].(map[string]any)["source"].(string))), &mc); err != nil {
				t.Fatal(err)
			}
			var installed struct {
				Ignition struct {
					Security struct {
						TLS struct{ CertificateAuthorities []struct{ Source string } }
					}
				}
			}
			if err := json.Unmarshal(mc.Spec.Config.Raw, &installed); err != nil {
				t.Fatal(err)
			}
			if cas := installed.Ignition.Security.TLS.CertificateAuthorities; len(cas) != 1 || decodeDataURL(t, cas[0].Source) != string(ca) {
				t.Errorf("the installed node's MachineConfig trusts %+v, want the CA", cas)
			}
		})
	}
}

func TestPrepareLiveIgnitionAdditionErrors(t *testing.T) {
	bip := bipConfig(t, "3.2.0")
	script := []byte("#!/bin/sh\n")
	for _, c := range []struct {
		name string
		opts LiveIgnitionOptions
		want string
		is   error
	}{
		{"same script name", LiveIgnitionOptions{PreInstall: []InstallScript{{"a", script}, {"a", script}}}, "two pre-install scripts are named a", nil},
		{"not a file name", LiveIgnitionOptions{PostInstall: []InstallScript{{"../a", script}}}, "is not a file name", nil},
		{"not a CA", LiveIgnitionOptions{IgnitionCAs: [][]byte{[]byte("hello")}}, "", ErrNotCertificate},
		{"bad fragment", LiveIgnitionOptions{LiveFragments: []LiveFragment{{"x.ign", []byte(`{"ignition":{}}`)}}}, "x.ign: not an Ignition config", nil},
		{"second bip", LiveIgnitionOptions{LiveFragments: []LiveFragment{{"other.ign", bip}}}, "other.ign", ErrSecondBootstrapInPlace},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Installation = Installation{Disk: "/dev/vda"}
			_, _, err := PrepareLiveIgnition(bip, c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
				t.Errorf("error %v, want %q (%v)", err, c.want, c.is)
			}
		})
	}
	// A fragment of a newer spec than the live system is known to read is a warning.
	newer := []byte(`{"ignition":{"version":"3.4.0"}}`)
	_, warnings, err := PrepareLiveIgnition(bip, LiveIgnitionOptions{Installation: Installation{Disk: "/dev/vda"},
		LiveFragments: []LiveFragment{{"newer.ign", newer}}})
	if err != nil || !slices.ContainsFunc(warnings, func(w Warning) bool {
		return w.Path == "newer.ign" && strings.Contains(w.Message, "Ignition 3.4.0 is newer than the bootstrap-in-place config's 3.2.0")
	}) {
		t.Errorf("a 3.4.0 fragment in a 3.2.0 config: %v, warnings %v", err, warnings)
	}
	plain := []byte(`{"ignition":{"version":"3.2.0"}}`)
	if _, _, err := PrepareLiveIgnition(plain, LiveIgnitionOptions{AllowAnyIgnition: true, IgnitionCAs: [][]byte{testCA(t)}}); err == nil {
		t.Error("additions to a config that is not bootstrap-in-place were accepted")
	}
}

// A live script's path that the config already holds is refused, not overwritten.
func TestAddLiveAdditionsRefusesTakenPath(t *testing.T) {
	raw := []byte(`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/usr/local/bin/pre-install-x","contents":{"source":"data:,"}}]}}`)
	_, err := addLiveAdditions(raw, []InstallScript{{"x", nil}}, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "already has a file /usr/local/bin/pre-install-x") {
		t.Errorf("error %v", err)
	}
}

// FuzzCheckCABundle: a bundle accepted holds a certificate that x509 parses, and an accepted
// bundle stays accepted with text around it, as PEM allows.
func FuzzCheckCABundle(f *testing.F) {
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("hello"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if CheckCABundle(data) != nil {
			return
		}
		found := false
		for rest := data; ; {
			var block *pem.Block
			if block, rest = pem.Decode(rest); block == nil {
				break
			}
			if _, err := x509.ParseCertificate(block.Bytes); block.Type == "CERTIFICATE" && err == nil {
				found = true
			}
		}
		if !found {
			t.Fatal("accepted a bundle without a certificate")
		}
		if err := CheckCABundle(append(append([]byte("comment\n"), data...), "\ntrailer\n"...)); err != nil {
			t.Fatalf("the bundle with text around it: %v", err)
		}
	})
}
