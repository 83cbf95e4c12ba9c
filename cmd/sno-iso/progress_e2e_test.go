package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/nodedir"
	reports "github.com/sno-iso/sno-iso/progress"
	"github.com/sno-iso/sno-iso/redfish/redfishtest"
)

// freeLoopbackPort is a TCP port free on 127.0.0.1 now: serve must know it before it starts,
// to tell the guest where to report.
func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// The whole loop on the look-alike: serve, bmc boot --node on the fake BMC, the fetched ISO
// booted by QEMU with user-mode networking. The look-alike runs the units' own report hooks
// (and the real install-to-disk.sh) and reaches serve on the host's loopback through QEMU's
// gateway 10.0.2.2. `wait --for install-done` follows the reports; serve ejects the media
// and clears the boot override when install-done arrives, before the look-alike reboots. A
// failing install makes `wait` exit 1 with the unit's journal, and nothing is ejected.
func TestInstallReportsUnderQEMU(t *testing.T) {
	testenv.Long(t, "boot tests take minutes")
	requireBootTools(t)
	iso := lookalikeISO(t)
	for _, tc := range []struct {
		name string
		exit int
	}{{"install", 0}, {"failing-install", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			boots := make(chan redfishtest.Boot, 4)
			bmc := startFakeBMC(t, redfishtest.Config{Profile: redfishtest.SushyTools(), FetchDir: t.TempDir(),
				OnBoot: func(b redfishtest.Boot) { boots <- b }})
			nodes := t.TempDir()
			// One look-alike minute is 15 s: the reboot delay is 15 s long.
			installation := "coreOSInstallation:\n  installationDisk: " + bipBootDisk + "\n  rebootDelay: 1m\n" +
				"liveKargs:\n  append:\n  - lookalike.systemd\n  - lookalike.minute=15\n  - lookalike.install-exit=" + strconv.Itoa(tc.exit) + "\n"
			nodeDir := writeBMCNode(t, nodes, "sno", bmc.URL()+bmc.SystemPath(), installation)
			ign := filepath.Join(nodeDir, nodedir.IgnitionFile)
			if err := os.WriteFile(ign, bipBootInput, 0o600); err != nil {
				t.Fatal(err)
			}
			port := freeLoopbackPort(t)
			host, guest := "http://127.0.0.1:"+port, "http://10.0.2.2:"+port
			s := startServeAt(t, "127.0.0.1:"+port, "--iso", iso, "--nodes", nodes, "--base-url", guest)

			r := snoEnv(t, nil, bmcArgs("boot", "--node", nodeDir, "--serve-url", host, "--wait")...)
			if r.code != 0 {
				t.Fatalf("bmc boot --node: exit %d\n%s\nserve:\n%s", r.code, r.stderr, s.output())
			}
			var boot redfishtest.Boot
			select {
			case boot = <-boots:
			case <-time.After(30 * time.Second):
				t.Fatalf("the fake BMC did not boot; bmc boot said:\n%s", r.stderr)
			}
			// serve's media are build's with the report URL serve urls prints.
			urls := mustSno(t, nil, "serve", "urls", "--nodes", nodes, "--base-url", guest, "--node", "sno")
			reportURL := ""
			for _, line := range strings.Split(string(urls), "\n") {
				if f := strings.Fields(line); len(f) == 3 && f[1] == "report" {
					reportURL = f[2]
				}
			}
			built := filepath.Join(t.TempDir(), "built.iso")
			mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", filepath.Join(nodeDir, nodedir.ConfigFile),
				"--report-url", reportURL, "-o", built)
			if fileSHA(t, boot.File) != fileSHA(t, built) {
				t.Fatalf("the BMC fetched another ISO than build --report-url %s writes", reportURL)
			}

			var waitOut, waitErr bytes.Buffer
			waitCmd := exec.Command(snoISO(t), "wait", "--node", nodeDir, "--for", "install-done", "--serve-url", host,
				"--timeout", "6m", "--interval", "500ms")
			waitCmd.Env = environWithoutBMCAccount()
			waitCmd.Stdout, waitCmd.Stderr = &waitOut, &waitErr
			if err := waitCmd.Start(); err != nil {
				t.Fatal(err)
			}
			serial := filepath.Join(t.TempDir(), "serial.log")
			vmSlots <- struct{}{}
			out, err := exec.Command(filepath.Join(repoRoot(t), "scripts", "boot"), "--net-user", "--timeout", "300",
				"--log", serial, "bios-cd", boot.File).CombinedOutput()
			<-vmSlots
			// The look-alike rebooted (or powered off): what the BMC shows now is what the
			// next boot gets.
			slot := bmc.Resource(bmc.SystemPath() + "/VirtualMedia/Cd")
			system := bmc.Resource(bmc.SystemPath())
			t.Logf("scripts/boot: %v\n%s", err, out)
			waitDone := make(chan error, 1)
			go func() { waitDone <- waitCmd.Wait() }()
			select {
			case <-waitDone:
			case <-time.After(time.Minute):
				waitCmd.Process.Kill()
				t.Fatalf("wait did not end after the boot:\n%s\n%s", waitOut.String(), waitErr.String())
			}
			code := waitCmd.ProcessState.ExitCode()
			t.Logf("wait exit %d:\n%s%s", code, waitOut.String(), waitErr.String())

			secret, err := capability.ReadSecretFile(capability.SecretPath(nodes))
			if err != nil {
				t.Fatal(err)
			}
			recs, err := reports.Fetch(context.Background(), http.DefaultClient, reports.URL(host, secret.Key, "sno"))
			if err != nil {
				t.Fatal(err)
			}
			var phases []string
			for _, rec := range recs {
				phases = append(phases, string(rec.Phase))
			}
			boot0 := system["Boot"].(map[string]any)
			if tc.exit == 0 {
				if want := "live-booted bootkube-started bootkube-done install-started install-done rebooting"; strings.Join(phases, " ") != want {
					t.Errorf("serve recorded %v, want %s", phases, want)
				}
				if code != 0 || !strings.Contains(waitOut.String(), "sno ") || !strings.Contains(waitOut.String(), " install-done") {
					t.Errorf("wait --for install-done: exit %d", code)
				}
				// sushy-tools keeps every override Continuous: what counts is that it no longer
				// points at the CD.
				target := boot0["BootSourceOverrideTarget"]
				if img, _ := slot["Image"].(string); slot == nil || img != "" || slot["Inserted"] == true ||
					(boot0["BootSourceOverrideEnabled"] != "Disabled" && (target == "Cd" || target == "UsbCd")) {
					t.Errorf("at the reboot the BMC still has %v inserted=%v, boot override %v", slot["Image"], slot["Inserted"], boot0)
				}
				if !strings.Contains(s.output(), "node sno installed: ejected 1 virtual media, boot override cleared") {
					t.Errorf("serve did not log the eject:\n%s", s.output())
				}
				return
			}
			if len(phases) == 0 || phases[len(phases)-1] != "failed" || strings.Contains(strings.Join(phases, " "), "install-done") {
				t.Errorf("serve recorded %v, want a failure before install-done", phases)
			}
			for _, want := range []string{"install-to-disk.service", "status=1", "coreos-installer (look-alike): error: failing with status 1"} {
				if !strings.Contains(waitErr.String(), want) {
					t.Errorf("wait's report lacks %q", want)
				}
			}
			if code != 1 {
				t.Errorf("wait exit %d after a failed install, want 1", code)
			}
			if img, _ := slot["Image"].(string); img == "" {
				t.Errorf("a failed install ejected the media")
			}
		})
	}
}
