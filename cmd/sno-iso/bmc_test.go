package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/nodedir"
	"github.com/sno-iso/sno-iso/redfish/redfishtest"
)

const (
	bmcUser     = "operator"
	bmcPassword = "pa55-Word-never-shown"
	// bmcImage is on a closed port of the loopback: the reachability check fails at once.
	bmcImage = "http://127.0.0.1:9/sno.iso"
)

// bmcEnv carries the test account the way users pass it.
var bmcEnv = []string{envBMCUsername + "=" + bmcUser, envBMCPassword + "=" + bmcPassword}

// snoEnv runs the binary with env added to the test's environment, minus any BMC account
// the developer's shell may hold.
func snoEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(snoISO(t), args...)
	cmd.Env = append(environWithoutBMCAccount(), env...)
	return runSno(t, cmd)
}

// environWithoutBMCAccount is the test's environment minus any BMC account the developer's
// shell may hold.
func environWithoutBMCAccount() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SNO_ISO_BMC_") {
			env = append(env, kv)
		}
	}
	return env
}

// bmcArgs are a bmc subcommand's arguments with fast retries.
func bmcArgs(sub string, args ...string) []string {
	return append([]string{"bmc", sub, "--retry-delay", "1ms", "--timeout", "30s"}, args...)
}

func startFakeBMC(t *testing.T, cfg redfishtest.Config) *redfishtest.BMC {
	t.Helper()
	cfg.Username, cfg.Password = bmcUser, bmcPassword
	if cfg.PowerDelay == 0 {
		cfg.PowerDelay = 10 * time.Millisecond
	}
	return redfishtest.Start(t, cfg)
}

func mustBMC(t *testing.T, args ...string) result {
	t.Helper()
	return snoEnvOK(t, bmcEnv, args...)
}

// snoEnvOK runs the binary with env and fails the test unless it succeeds without
// printing the password.
func snoEnvOK(t *testing.T, env []string, args ...string) result {
	t.Helper()
	r := snoEnv(t, env, args...)
	if r.code != 0 {
		t.Fatalf("sno-iso %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	if bytes.Contains(r.stdout, []byte(bmcPassword)) || bytes.Contains(r.stderr, []byte(bmcPassword)) {
		t.Fatalf("sno-iso %s printed the password", strings.Join(args, " "))
	}
	return r
}

// wantBMCFailure asserts a failure whose last line is the error, after the steps taken,
// mentioning each of wants.
func wantBMCFailure(t *testing.T, r result, wants ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(string(r.stderr), "\n"), "\n")
	last := lines[len(lines)-1]
	if r.code == 0 || !strings.HasPrefix(last, "Error: ") {
		t.Fatalf("exit %d, last line %q; want a failure ending in Error:", r.code, last)
	}
	for _, w := range wants {
		if !strings.Contains(string(r.stderr), w) {
			t.Errorf("stderr %q does not mention %q", r.stderr, w)
		}
	}
}

// boot, boot again, status, eject, against every vendor profile, checked on the fake.
func TestBMCEveryProfile(t *testing.T) {
	for _, p := range redfishtest.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			bmc := startFakeBMC(t, redfishtest.Config{Profile: p})
			r := mustBMC(t, bmcArgs("boot", "--bmc", bmc.URL(), "--iso-url", bmcImage, "--wait", "--json")...)
			var res struct {
				Slot, Image, Reset, PowerState string
				Inserted, Changed              bool
			}
			if err := json.Unmarshal(r.stdout, &res); err != nil {
				t.Fatalf("--json output %q: %v", r.stdout, err)
			}
			if res.Image != bmcImage || !res.Inserted || !res.Changed || res.Reset != "On" || res.PowerState != "On" {
				t.Errorf("result %+v", res)
			}
			override := "boot override set"
			if p.ContinuousOverrides {
				override = "Warning: the BMC keeps the boot override Cd Continuous, not once: the system boots the image at every start, " +
					"the one after the install too, until the media is ejected; eject the media after the install: sno-iso bmc eject\n"
			}
			for _, step := range []string{"found system", "using slot", "inserted " + bmcImage, override, "reset", "power On"} {
				if !strings.Contains(string(r.stderr), step) {
					t.Errorf("stderr lacks the step %q:\n%s", step, r.stderr)
				}
			}
			if boots := bmc.Boots(); len(boots) != 1 || boots[0].Image != bmcImage {
				t.Errorf("the fake booted %+v", boots)
			}

			r = mustBMC(t, bmcArgs("boot", "--bmc", bmc.URL(), "--iso-url", bmcImage, "--wait")...)
			if !strings.Contains(string(r.stderr), "nothing had to change") || len(bmc.Boots()) != 1 {
				t.Errorf("second boot: %d boots, stderr:\n%s", len(bmc.Boots()), r.stderr)
			}

			r = mustBMC(t, bmcArgs("status", "--bmc", bmc.URL())...)
			if !strings.Contains(string(r.stdout), "power   On") || !strings.Contains(string(r.stdout), ": "+bmcImage) {
				t.Errorf("status:\n%s", r.stdout)
			}

			mustBMC(t, bmcArgs("eject", "--bmc", bmc.URL())...)
			r = mustBMC(t, bmcArgs("status", "--bmc", bmc.URL(), "--json")...)
			var st struct {
				PowerState string
				Media      []struct {
					ID       string
					Inserted bool
				}
			}
			if err := json.Unmarshal(r.stdout, &st); err != nil {
				t.Fatalf("status --json %q: %v", r.stdout, err)
			}
			for _, m := range st.Media {
				if m.Inserted {
					t.Errorf("slot %s still inserted after eject: %s", m.ID, r.stdout)
				}
			}
			if bmc.OpenSessions() != 0 {
				t.Errorf("%d sessions left open", bmc.OpenSessions())
			}
			// A session where the BMC has them (Basic only where it has not), ended each time.
			var logins, logouts, basic int
			for _, req := range bmc.Requests() {
				switch {
				case req.Method == "POST" && strings.HasSuffix(req.Path, "/SessionService/Sessions"):
					logins++
				case req.Method == "DELETE":
					logouts++
				case req.Header.Get("Authorization") != "":
					basic++
				}
			}
			if p.NoSessions && (logins != 0 || basic == 0) || !p.NoSessions && (logins != 5 || logouts != 5 || basic != 0) {
				t.Errorf("%d logins, %d logouts, %d Basic requests for 5 runs (sessions: %v)", logins, logouts, basic, !p.NoSessions)
			}
		})
	}
}

// The DMTF mockups, where the shared fixtures are.
func TestBMCMockups(t *testing.T) {
	for _, name := range []string{"public-rackmount1", "public-telemetry", "public-acd"} {
		t.Run(name, func(t *testing.T) {
			bmc := startFakeBMC(t, redfishtest.Config{Mockup: redfishtest.MockupDir(t, name)})
			r := mustBMC(t, bmcArgs("boot", "--bmc", bmc.URL()+bmc.SystemPath(), "--iso-url", bmcImage, "--wait")...)
			if !strings.Contains(string(r.stderr), "ejected") || len(bmc.Boots()) != 1 {
				t.Errorf("%d boots; stderr:\n%s", len(bmc.Boots()), r.stderr)
			}
		})
	}
}

// writeBMCNode writes DIR/NODE/sno.yaml, the installation YAML plus a bmc section, and the
// credentials file it names.
func writeBMCNode(t *testing.T, nodes, name, address, installation string) string {
	t.Helper()
	dir := filepath.Join(nodes, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(dir, "bmc-credentials.yaml")
	if err := os.WriteFile(creds, []byte("username: "+bmcUser+"\npassword: "+bmcPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, nodedir.ConfigFile), installation+"bmc:\n  address: "+address+"\n  credentialsFile: bmc-credentials.yaml\n")
	return dir
}

// bmc boot --node boots the URL that `serve urls` prints for the node: under the nodes
// directory's secret, a secret kept elsewhere, or an open server's plain URL.
func TestBMCNode(t *testing.T) {
	bmc := startFakeBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools()})
	nodes := t.TempDir()
	node := writeBMCNode(t, nodes, "sno1", "redfish-virtualmedia+http://"+strings.TrimPrefix(bmc.URL(), "http://")+bmc.SystemPath(), serveSnoYAML)
	const serveURL = "http://127.0.0.1:9"
	slotImage := func() any { return bmc.Resource(bmc.SystemPath() + "/VirtualMedia/Cd")["Image"] }
	// Before serve ever ran there is no secret, so no URL: nothing is inserted.
	r := snoEnv(t, nil, bmcArgs("boot", "--node", node, "--serve-url", serveURL, "--no-power")...)
	wantBMCFailure(t, r, filepath.Join(nodes, capability.SecretFileName), "no sno-iso secret", "serve rotate-secret", "--secret-file", "--open")
	if img, _ := slotImage().(string); r.code != 1 || img != "" {
		t.Errorf("without a secret: exit %d, slot holds %v", r.code, slotImage())
	}
	mustSno(t, nil, "serve", "rotate-secret", "--nodes", nodes)
	printed := func(args ...string) map[string]string {
		out := mustSno(t, nil, append([]string{"serve", "urls", "--nodes", nodes, "--base-url", serveURL, "--node", "sno1"}, args...)...)
		urls := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Fields(line); len(f) == 3 {
				urls[f[1]] = f[2]
			}
		}
		return urls
	}
	elsewhere := filepath.Join(t.TempDir(), "secret")
	mustSno(t, nil, "serve", "rotate-secret", "--secret-file", elsewhere)
	for _, tt := range []struct {
		name       string
		args, urls []string
		kind       string
	}{
		{"minimal under the nodes directory's secret", []string{"--minimal"}, nil, "minimal-iso"},
		{"a secret kept elsewhere", []string{"--secret-file", elsewhere}, []string{"--secret-file", elsewhere}, "iso"},
		{"an open server", []string{"--open"}, []string{"--open"}, "iso"},
	} {
		want := printed(tt.urls...)[tt.kind]
		r := snoEnv(t, nil, bmcArgs("boot", append([]string{"--node", node, "--serve-url", serveURL + "/", "--no-power"}, tt.args...)...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.name, r.code, r.stderr)
		}
		if !strings.Contains(string(r.stderr), "Warning: the image URL is not reachable from here") {
			t.Errorf("%s: no warning that the image URL does not answer:\n%s", tt.name, r.stderr)
		}
		if slotImage() != want || want == "" {
			t.Errorf("%s: slot holds %v, want %q as serve urls prints it", tt.name, slotImage(), want)
		}
	}
	if tokenless := serveURL + "/sno1.iso"; slotImage() != tokenless {
		t.Errorf("--open: slot holds %v, want %s", slotImage(), tokenless)
	}
	if bmc.PowerState() != "Off" {
		t.Errorf("--no-power: power %s", bmc.PowerState())
	}
	// --credentials-file wins over the environment, which wins over the node's file.
	wrong := []string{envBMCUsername + "=x", envBMCPassword + "=y"}
	snoEnvOK(t, wrong, bmcArgs("status", "--node", node, "--credentials-file", filepath.Join(node, "bmc-credentials.yaml"))...)
	r = snoEnv(t, wrong, bmcArgs("status", "--node", node)...)
	wantBMCFailure(t, r, "refused", "401", envBMCUsername)
}

// The capability URL is the node's token under the secret, with the server's URL as given.
func TestServedISOURL(t *testing.T) {
	nodes := t.TempDir()
	secret, _, err := capability.LoadOrCreateSecret(filepath.Join(nodes, capability.SecretFileName))
	if err != nil {
		t.Fatal(err)
	}
	token := capability.Token(secret.Key, "sno")
	for _, tt := range []struct {
		serve, node string
		minimal     bool
		access      nodedir.Access
		want        string
	}{
		{"http://10.0.0.1:8080", filepath.Join(nodes, "sno"), false, nodedir.Access{}, "http://10.0.0.1:8080/" + token + "/sno.iso"},
		{"http://10.0.0.1:8080/", filepath.Join(nodes, "sno") + "/", true, nodedir.Access{}, "http://10.0.0.1:8080/" + token + "/sno-minimal.iso"},
		{"https://h/media/", "elsewhere/sno", false, nodedir.Access{SecretFile: filepath.Join(nodes, capability.SecretFileName)}, "https://h/media/" + token + "/sno.iso"},
		{"http://h/media/", "elsewhere/node-a", false, nodedir.Access{Open: true}, "http://h/media/node-a.iso"},
	} {
		if got, err := servedISOURL(tt.serve, tt.node, tt.minimal, tt.access); err != nil || got != tt.want {
			t.Errorf("servedISOURL(%q, %q, %v, %+v) = %q, %v; want %q", tt.serve, tt.node, tt.minimal, tt.access, got, err, tt.want)
		}
	}
	if _, err := servedISOURL("http://h", "elsewhere/sno", false, nodedir.Access{}); !errors.Is(err, capability.ErrNoSecret) {
		t.Errorf("without a secret: %v, want one wrapping capability.ErrNoSecret", err)
	}
}

func TestBMCBadInput(t *testing.T) {
	ilo := startFakeBMC(t, redfishtest.Config{Profile: redfishtest.ILO()})
	idrac := startFakeBMC(t, redfishtest.Config{Profile: redfishtest.IDRAC()})
	blades := redfishtest.SushyTools()
	blades.OtherSystems = []string{"blade-2"}
	chassis := startFakeBMC(t, redfishtest.Config{Profile: blades})
	noCD := redfishtest.SushyTools()
	noCD.Slots = noCD.Slots[1:]
	floppyOnly := startFakeBMC(t, redfishtest.Config{Profile: noCD})
	noCDTarget := redfishtest.SushyTools()
	noCDTarget.BootTargets = []string{"Pxe", "Hdd"}
	pxeOnly := startFakeBMC(t, redfishtest.Config{Profile: noCDTarget})
	noBMCNode := t.TempDir()
	writeFile(t, filepath.Join(noBMCNode, nodedir.ConfigFile), serveSnoYAML)
	iloNode := writeBMCNode(t, t.TempDir(), "sno", ilo.URL(), serveSnoYAML)

	for _, tt := range []struct {
		name  string
		env   []string
		args  []string
		code  int
		wants []string
	}{
		{"unknown system", bmcEnv, bmcArgs("boot", "--bmc", ilo.URL(), "--iso-url", bmcImage, "--system", "7"), 1,
			[]string{`no system "7"`, "/redfish/v1/Systems/1", "--system"}},
		{"several systems", bmcEnv, bmcArgs("status", "--bmc", chassis.URL()), 1,
			[]string{"manages 2 systems", "/redfish/v1/Systems/blade-2", "--system"}},
		{"unknown slot", bmcEnv, bmcArgs("boot", "--bmc", ilo.URL(), "--iso-url", bmcImage, "--slot", "CD1"), 1,
			[]string{`no virtual media slot "CD1"`, "1, 2", "--slot"}},
		{"no CD slot", bmcEnv, bmcArgs("boot", "--bmc", floppyOnly.URL(), "--iso-url", bmcImage), 1,
			[]string{"no virtual CD/DVD slot", "Floppy"}},
		{"HTML", nil, bmcArgs("status", "--bmc", redfishtest.Answering(t, "text/html", "<html>router login</html>")), 1,
			[]string{"HTML page", "router login", "check the address"}},
		{"nonsense JSON", nil, bmcArgs("status", "--bmc", redfishtest.Answering(t, "application/json", `{"Systems":"yes"}`)), 1,
			[]string{"not a Redfish answer", "check the address"}},
		{"401", []string{envBMCUsername + "=" + bmcUser, envBMCPassword + "=wrong"}, bmcArgs("status", "--bmc", idrac.URL()), 1,
			[]string{"refused the credentials", "401", envBMCPassword}},
		{"timeout", nil, []string{"bmc", "status", "--bmc", redfishtest.Unresponsive(t), "--timeout", "1s", "--retry-delay", "1ms"}, 1,
			[]string{"deadline", "--timeout 1s"}},
		{"refused URL", bmcEnv, bmcArgs("boot", "--bmc", idrac.URL(), "--iso-url", "http://127.0.0.1:9/sno?node=1"), 1,
			[]string{"Warning: the image URL has a query string", "RAC0720", "must end in .iso"}},
		{"boot override impossible", bmcEnv, bmcArgs("boot", "--bmc", pxeOnly.URL(), "--iso-url", bmcImage), 1,
			[]string{"allows only Pxe, Hdd", "ejected again"}},
		{"no BMC", nil, bmcArgs("status"), 2, []string{"needs --bmc ADDRESS or --node"}},
		{"both", nil, bmcArgs("status", "--bmc", "https://h", "--node", noBMCNode), 2, []string{"not both"}},
		{"node without bmc", nil, bmcArgs("status", "--node", noBMCNode), 1, []string{"has no bmc section"}},
		{"bad address", nil, bmcArgs("status", "--bmc", "bmc.example"), 2, []string{"no scheme; write https://bmc.example"}},
		{"credentials in address", nil, bmcArgs("status", "--bmc", "https://root:hunter2@bmc"), 2, []string{"credentials do not belong"}},
		{"insecure and CA", nil, bmcArgs("status", "--bmc", "https://h", "--insecure", "--ca-file", "x.pem"), 2, []string{"--insecure", "--ca-file"}},
		{"half the account", []string{envBMCUsername + "=u"}, bmcArgs("status", "--bmc", "https://h"), 1, []string{"set both"}},
		{"no ISO URL", nil, bmcArgs("boot", "--bmc", "https://h"), 2, []string{"needs --iso-url"}},
		{"boot mode", nil, bmcArgs("boot", "--bmc", "https://h", "--iso-url", bmcImage, "--boot-mode", "efi"), 2, []string{"uefi or legacy"}},
		{"serve URL without node", nil, bmcArgs("boot", "--bmc", "https://h", "--serve-url", "http://x:1"), 2, []string{"go with --node"}},
		{"secret file without node", nil, bmcArgs("boot", "--bmc", "https://h", "--iso-url", bmcImage, "--secret-file", "s"), 2, []string{"go with --node"}},
		{"open and secret file", nil, bmcArgs("boot", "--node", iloNode, "--serve-url", "http://x:1", "--open", "--secret-file", "s"), 2, []string{"leave out --secret-file"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := snoEnv(t, tt.env, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d: %s", r.code, tt.code, r.stderr)
			}
			wantBMCFailure(t, r, tt.wants...)
			for _, secret := range []string{bmcPassword, "hunter2"} {
				if strings.Contains(string(r.stderr), secret) {
					t.Errorf("stderr shows a password:\n%s", r.stderr)
				}
			}
		})
	}
	if slot := pxeOnly.Resource(pxeOnly.SystemPath() + "/VirtualMedia/Cd"); slot["Inserted"] != false {
		t.Errorf("the image stayed inserted after the failed boot: %v", slot)
	}
}

// A credentials file, TLS with --ca-file, and a --verbose trace without secrets.
func TestBMCCredentialsFileTLSAndTrace(t *testing.T) {
	bmc := startFakeBMC(t, redfishtest.Config{Profile: redfishtest.IDRAC(), TLS: true})
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds.yaml")
	os.WriteFile(creds, []byte("username: "+bmcUser+"\npassword: "+bmcPassword+"\n"), 0o600)
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, bmc.CertificatePEM(), 0o644)

	r := snoEnv(t, nil, bmcArgs("status", "--bmc", bmc.URL(), "--credentials-file", creds)...)
	wantBMCFailure(t, r, "certificate", "--ca-file", "--insecure")

	r = mustBMC(t, bmcArgs("status", "--bmc", bmc.URL(), "--credentials-file", creds, "--ca-file", ca, "--verbose")...)
	trace := string(r.stderr)
	if !strings.Contains(trace, "> POST "+bmc.URL()+"/redfish/v1/SessionService/Sessions") || !strings.Contains(trace, `"Password":"<redacted>"`) || !strings.Contains(trace, "X-Auth-Token: <redacted>") {
		t.Errorf("the trace lacks the redacted login:\n%s", trace)
	}
	if strings.Contains(trace, "token-") {
		t.Errorf("the trace shows the session token")
	}
	mustBMC(t, bmcArgs("status", "--bmc", bmc.URL(), "--credentials-file", creds, "--insecure")...)

	loose := filepath.Join(dir, "loose.yaml")
	os.WriteFile(loose, []byte("username: "+bmcUser+"\npassword: "+bmcPassword+"\n"), 0o644)
	r = mustBMC(t, bmcArgs("status", "--bmc", bmc.URL(), "--credentials-file", loose, "--insecure")...)
	if !strings.Contains(string(r.stderr), "can be read by other users") {
		t.Errorf("no warning about a world-readable credentials file:\n%s", r.stderr)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("user: "+bmcUser+"\npass: "+bmcPassword+"\n"), 0o600)
	r = snoEnv(t, nil, bmcArgs("status", "--bmc", bmc.URL(), "--credentials-file", bad, "--insecure")...)
	wantBMCFailure(t, r, "username: and password:")
	if strings.Contains(string(r.stderr), bmcPassword) {
		t.Errorf("the error shows the file's password: %s", r.stderr)
	}
}

// bmc --node reads the node's credentials directory from inside the node only: its password
// file linked to a file outside is refused, naming the file, and no request reaches the BMC.
func TestBMCNodeCredentialsLinkedOut(t *testing.T) {
	bmc := startFakeBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools()})
	nodes := t.TempDir()
	dir := writeBMCNode(t, nodes, "sno1", bmc.URL()+bmc.SystemPath(), serveSnoYAML)
	writeFile(t, filepath.Join(dir, nodedir.ConfigFile), serveSnoYAML+"bmc:\n  address: "+bmc.URL()+bmc.SystemPath()+"\n  credentialsFile: creds\n")
	outside := filepath.Join(t.TempDir(), "password")
	writeFile(t, outside, "OUTSIDE-THE-NODE\n")
	if err := os.Mkdir(filepath.Join(dir, "creds"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "creds", "username"), bmcUser+"\n")
	password := filepath.Join(dir, "creds", "password")
	if err := os.Symlink(outside, password); err != nil {
		t.Fatal(err)
	}
	r := snoEnv(t, nil, bmcArgs("status", "--node", dir)...)
	if r.code == 0 || !strings.Contains(string(r.stderr), password+" leads outside the node directory") ||
		strings.Contains(string(r.stderr), "OUTSIDE-THE-NODE") {
		t.Errorf("exit %d:\n%s", r.code, r.stderr)
	}
	if reqs := bmc.Requests(); len(reqs) != 0 {
		t.Errorf("the BMC got %d requests", len(reqs))
	}
}
