package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/nodedir"
	"github.com/sno-iso/sno-iso/redfish/redfishtest"
)

// servedBoot is one run of the whole flow: serve, bmc boot --node, the fake BMC fetching and
// booting what serve gave it.
type servedBoot struct {
	serve *servedNode
	// boot is the fake's power-on into the fetched ISO.
	boot redfishtest.Boot
	// built is what `sno-iso build` writes for the same node.
	built string
	// token is the capability path segment of the node's URL.
	token string
}

// bootServedNode writes node "sno" (ignition and coreOSInstallation YAML, plus a bmc section
// naming a fake BMC of profile p whose virtual CD fetches into a temp dir), serves it from
// iso on 127.0.0.1, runs `bmc boot --node --serve-url --wait`, and waits for the fake to boot.
func bootServedNode(t *testing.T, iso string, p redfishtest.Profile, ignition []byte, installation string) servedBoot {
	t.Helper()
	boots := make(chan redfishtest.Boot, 4)
	bmc := startFakeBMC(t, redfishtest.Config{Profile: p, FetchDir: t.TempDir(), OnBoot: func(b redfishtest.Boot) { boots <- b }})
	nodes := t.TempDir()
	nodeDir := writeBMCNode(t, nodes, "sno", bmc.URL()+bmc.SystemPath(), installation)
	cfg := filepath.Join(nodeDir, nodedir.ConfigFile)
	ign := filepath.Join(nodeDir, nodedir.IgnitionFile)
	if err := os.WriteFile(ign, ignition, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--iso", iso, "--nodes", nodes)

	r := snoEnv(t, nil, bmcArgs("boot", "--node", nodeDir, "--serve-url", s.url, "--wait")...)
	if r.code != 0 {
		t.Fatalf("bmc boot --node: exit %d\n%s\nserve:\n%s", r.code, r.stderr, s.output())
	}
	var sb servedBoot
	select {
	case sb.boot = <-boots:
	case <-time.After(30 * time.Second):
		t.Fatalf("the fake BMC did not boot; bmc boot said:\n%s", r.stderr)
	}
	// The capability URL, as `serve urls` prints it: serve answers nothing else.
	if want := s.urls(t, nodes, "sno")["iso"]; sb.boot.Image != want || sb.boot.File == "" {
		t.Fatalf("the fake booted %+v, want the fetched %s", sb.boot, want)
	}
	sb.token = strings.Split(strings.TrimPrefix(sb.boot.Image, s.url+"/"), "/")[0]
	sb.serve = s
	sb.built = filepath.Join(t.TempDir(), "built.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", sb.built)
	return sb
}

// The BMC's virtual CD gets exactly what `sno-iso build` writes for the node from its
// capability URL, whether it fetches in one GET (sushy-tools) or in Range reads (iDRAC), and
// serve's log and index page show the fetch without the token.
func TestBMCBootsServedNode(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	idrac := redfishtest.IDRAC()
	idrac.FetchChunk = 64 << 10
	for _, tc := range []struct {
		profile redfishtest.Profile
		logged  string
	}{
		{redfishtest.SushyTools(), `"GET /{token}/sno.iso HTTP/1.1" 200`},
		{idrac, `"GET /{token}/sno.iso HTTP/1.1" 206 65536`},
	} {
		t.Run(tc.profile.Name, func(t *testing.T) {
			sb := bootServedNode(t, iso, tc.profile, bipConfigBytes(t), serveSnoYAML)
			if got, want := fileSHA(t, sb.boot.File), fileSHA(t, sb.built); got != want {
				t.Errorf("the BMC fetched SHA-256 %s, build wrote %s", got, want)
			}
			if log := sb.serve.output(); !strings.Contains(log, tc.logged) || strings.Contains(log, sb.token) {
				t.Errorf("serve's log lacks %s or shows the token %s:\n%s", tc.logged, sb.token, log)
			}
			resp, err := http.Get(sb.serve.url + "/")
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(page), "sno.iso by 127.0.0.1: ") {
				t.Errorf("serve's index page does not show the BMC's fetch:\n%s", page)
			}
		})
	}
}

// The whole flow on the look-alike: what the fake BMC fetched from serve boots under QEMU
// and /init finds the node's bootstrap-in-place config, prepared for its disk.
func TestBMCBootsServedNodeUnderQEMU(t *testing.T) {
	testenv.Long(t, "boot tests take minutes")
	requireBootTools(t)
	sb := bootServedNode(t, lookalikeISO(t), redfishtest.IDRAC(), bipBootInput, "coreOSInstallation:\n  installationDisk: "+bipBootDisk+"\n")
	if got, want := fileSHA(t, sb.boot.File), fileSHA(t, sb.built); got != want {
		t.Fatalf("the BMC fetched SHA-256 %s, build wrote %s", got, want)
	}
	bootAndCheck(t, "uefi-cd", sb.boot.File, bootWant{kargs: lookalikeKargs, ignition: bipBootPrepared})
}

// bipConfigBytes is a generated bootstrap-in-place config.
func bipConfigBytes(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(bipConfig(t, t.TempDir(), 150000))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
