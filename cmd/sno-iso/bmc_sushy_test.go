package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/nodedir"
	"github.com/sno-iso/sno-iso/redfish/redfishtest"
)

// What a user of a current sushy-tools sees when something is wrong: the BMC's own words
// and advice that fits the problem.
func TestBMCSushyToolsAdvice(t *testing.T) {
	bmc := startFakeBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools()})
	reader := startFakeBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools(), ReadOnlyAccount: true})
	echo := redfishtest.SushyTools()
	echo.EchoCredentials = true
	echoing := startFakeBMC(t, redfishtest.Config{Profile: echo})
	wrongAccount := []string{envBMCUsername + "=" + bmcUser, envBMCPassword + "=not-the-" + bmcPassword}
	https := strings.Replace(bmc.URL(), "http://", "https://", 1)
	for _, tt := range []struct {
		name        string
		env, args   []string
		wants, nots []string
	}{
		{"no account", nil, bmcArgs("status", "--bmc", bmc.URL()),
			[]string{"wants credentials and none were given", "Authorization required", envBMCUsername, "--credentials-file"}, []string{"Operator"}},
		{"wrong password", wrongAccount, bmcArgs("status", "--bmc", bmc.URL()),
			[]string{"refused the credentials", "Incorrect username or password", "check the username and password in " + envBMCUsername},
			[]string{"Operator"}},
		{"read-only account", bmcEnv, bmcArgs("boot", "--bmc", reader.URL(), "--iso-url", bmcImage, "--no-power"),
			[]string{"lacks the privilege", "403", "insufficient privileges", "Operator role"}, []string{"check the username"}},
		{"a slot that takes no CD", bmcEnv, bmcArgs("boot", "--bmc", bmc.URL(), "--iso-url", bmcImage, "--slot", "Floppy"),
			[]string{"slot Floppy takes Floppy/USBStick", "the CD/DVD slots are Cd", "--slot"}, nil},
		{"https to a plain-HTTP BMC", bmcEnv, bmcArgs("status", "--bmc", https),
			[]string{"plain HTTP", "write " + bmc.URL() + " in --bmc"}, []string{"certificate"}},
		{"https to a plain-HTTP BMC, Metal3 form", bmcEnv,
			bmcArgs("status", "--bmc", "redfish-virtualmedia://"+strings.TrimPrefix(bmc.URL(), "http://")),
			[]string{"write redfish-virtualmedia+http://" + strings.TrimPrefix(bmc.URL(), "http://") + " in --bmc"}, nil},
		{"an echoed password, traced", wrongAccount, bmcArgs("status", "--bmc", echoing.URL(), "--verbose"),
			[]string{"Incorrect username or password", "<redacted>"},
			[]string{"not-the-" + bmcPassword, base64.StdEncoding.EncodeToString([]byte(bmcUser + ":not-the-" + bmcPassword))}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := snoEnv(t, tt.env, tt.args...)
			wantBMCFailure(t, r, tt.wants...)
			for _, not := range tt.nots {
				if strings.Contains(string(r.stderr), not) {
					t.Errorf("stderr mentions %q:\n%s", not, r.stderr)
				}
			}
		})
	}
	if slot := bmc.Resource(bmc.SystemPath() + "/VirtualMedia/Floppy"); slot["Inserted"] != false {
		t.Errorf("the refused --slot Floppy boot inserted the image: %v", slot)
	}

	// The System by its name, by flag or in the address: sushy-tools redirects to its UUID.
	r := mustBMC(t, bmcArgs("boot", "--bmc", bmc.URL()+"/redfish/v1/Systems/fake", "--iso-url", bmcImage, "--no-power")...)
	if n := strings.Count(string(r.stderr), "unencrypted"); n != 1 {
		t.Errorf("%d warnings about the account over plain http, want 1:\n%s", n, r.stderr)
	}
	r = mustBMC(t, bmcArgs("status", "--bmc", bmc.URL(), "--system", "fake")...)
	if !strings.Contains(string(r.stdout), "media   Cd (CD/DVD): "+bmcImage) || !strings.Contains(string(r.stdout), "boot    Cd Continuous") {
		t.Errorf("status of the System named fake:\n%s", r.stdout)
	}
}

// A BMC that echoes a wrong password in any encoding its web stack uses: no line sno-iso
// prints, --verbose trace included, holds the password in any of them.
func TestBMCEchoedPasswordEncodings(t *testing.T) {
	const password = `wrong pa55/w%rd+"<&é`
	var shown []string
	for _, f := range redfishtest.EchoForms {
		shown = append(shown, f.Encode(password))
	}
	shown = append(shown, base64.StdEncoding.EncodeToString([]byte(bmcUser+":"+password)))
	for _, p := range []redfishtest.Profile{redfishtest.SushyTools(), redfishtest.IDRAC()} {
		for _, form := range redfishtest.EchoForms {
			p.EchoCredentials, p.EchoForm = true, form
			bmc := startFakeBMC(t, redfishtest.Config{Profile: p})
			r := snoEnv(t, []string{envBMCUsername + "=" + bmcUser, envBMCPassword + "=" + password},
				bmcArgs("status", "--bmc", bmc.URL(), "--verbose")...)
			wantBMCFailure(t, r, "<redacted>")
			for _, f := range shown {
				if strings.Contains(string(r.stdout)+string(r.stderr), f) {
					t.Errorf("%s, echoed as %q: %q shown:\n%s%s", p.Name, form, f, r.stdout, r.stderr)
				}
			}
		}
	}
}

// sno.yaml's bmc section: caFile is used, and errors name the key a value came from, not a
// flag that was never given.
func TestBMCNodeKeysNamed(t *testing.T) {
	secure := startFakeBMC(t, redfishtest.Config{Profile: redfishtest.IDRAC(), TLS: true})
	plain := startFakeBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools()})
	nodes := t.TempDir()
	withKeys := func(name, address, keys string) (dir, config string) {
		dir = writeBMCNode(t, nodes, name, address, serveSnoYAML)
		config = filepath.Join(dir, nodedir.ConfigFile)
		f, err := os.OpenFile(config, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.WriteString(keys)
		return dir, config
	}
	// A node's files, its CA too, are inside its directory.
	withCA, _ := withKeys("with-ca", secure.URL(), "  caFile: bmc-ca.pem\n")
	ca := filepath.Join(withCA, "bmc-ca.pem")
	writeFile(t, ca, string(secure.CertificatePEM()))
	mustBMC(t, bmcArgs("status", "--node", withCA)...)

	insecure, config := withKeys("insecure", secure.URL(), "  insecure: true\n")
	r := snoEnv(t, bmcEnv, bmcArgs("status", "--node", insecure, "--ca-file", ca)...)
	wantBMCFailure(t, r, "bmc.insecure in "+config+" skips the certificate check that --ca-file is for")
	if strings.Contains(string(r.stderr), "--insecure") || r.code != 1 {
		t.Errorf("exit %d; the error blames --insecure, which was not given:\n%s", r.code, r.stderr)
	}

	otherCA, config := withKeys("other-ca", secure.URL(), "  caFile: wrong-ca.pem\n")
	writeFile(t, filepath.Join(otherCA, "wrong-ca.pem"), string(otherCAPEM(t)))
	r = snoEnv(t, bmcEnv, bmcArgs("status", "--node", otherCA)...)
	wantBMCFailure(t, r, "certificate", "bmc.caFile in "+config+" "+filepath.Join(otherCA, "wrong-ca.pem")+" is not the CA")

	wrongSystem, config := withKeys("wrong-system", plain.URL(), "  systemID: nowhere\n")
	r = snoEnv(t, bmcEnv, bmcArgs("status", "--node", wrongSystem)...)
	wantBMCFailure(t, r, `"nowhere"`, "correct bmc.systemID in "+config)

	missingCA, config := withKeys("missing-ca", secure.URL(), "  caFile: nowhere.pem\n")
	r = snoEnv(t, bmcEnv, bmcArgs("status", "--node", missingCA)...)
	wantBMCFailure(t, r, "bmc.caFile in "+config)
	if strings.Contains(string(r.stderr), "--ca-file") {
		t.Errorf("the error blames --ca-file, which was not given:\n%s", r.stderr)
	}

	host := strings.TrimPrefix(plain.URL(), "http://")
	tlsOnPlain, config := withKeys("tls-on-plain", "redfish-virtualmedia://"+host, "")
	r = snoEnv(t, bmcEnv, bmcArgs("status", "--node", tlsOnPlain)...)
	wantBMCFailure(t, r, "plain HTTP", "write redfish-virtualmedia+http://"+host+" in bmc.address in "+config)
}

// The fake BMC runs on its own, as docs/bmc.md shows, and sno-iso drives it.
func TestFakeBMCCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fakebmc")
	build := exec.Command("go", "build", "-o", bin, "github.com/sno-iso/sno-iso/redfish/redfishtest/cmd/fakebmc")
	build.Dir = packageDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building fakebmc: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--profile", "sushy-tools", "--lifetime", "2m", "--power-delay", "10ms")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	printed := map[string]string{}
	lines := bufio.NewScanner(stdout)
	for len(printed) < 4 && lines.Scan() {
		if key, value, ok := strings.Cut(lines.Text(), ": "); ok {
			printed[key] = value
		}
	}
	url, password := printed["url"], printed["password"]
	if !strings.HasPrefix(url, "http://127.0.0.1:") || printed["username"] == "" || len(password) < 16 {
		t.Fatalf("fakebmc printed %v; want a 127.0.0.1 URL and an account", printed)
	}
	account := []string{envBMCUsername + "=" + printed["username"], envBMCPassword + "=" + password}
	r := snoEnvOK(t, account, bmcArgs("status", "--bmc", url)...)
	if !strings.Contains(string(r.stdout), "system  "+printed["system"]) || !strings.Contains(string(r.stdout), "media   Cd (CD/DVD): empty") {
		t.Errorf("status against fakebmc:\n%s", r.stdout)
	}
	r = snoEnv(t, nil, bmcArgs("status", "--bmc", url)...)
	wantBMCFailure(t, r, "Authorization required")

	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("fakebmc after an interrupt: %v", err)
		}
	case <-time.After(time.Minute):
		t.Errorf("fakebmc did not stop on an interrupt")
	}
}

// otherCAPEM is a CA certificate that signed nothing the fake BMCs serve.
func otherCAPEM(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"},
		IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
