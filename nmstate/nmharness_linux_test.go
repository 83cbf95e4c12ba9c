package nmstate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/testenv"
)

// judge is NetworkManager 1.42 (Debian's) running as root in a network namespace of its own,
// on a private system bus, reading the keyfiles under test; veth pairs stand in for NICs.
// Its mount namespace is private too: sysfs for the namespace, a tmpfs /run holding the
// udev markers, a tmpfs /var/lib/NetworkManager, so the host is untouched.
type judge struct {
	t      *testing.T
	ns     string
	dir    string
	busEnv string
	// kernelNames maps the document's interface names to the veths made for them.
	kernelNames map[string]string
}

var judgeCount atomic.Int32

// waitBound bounds every wait on NetworkManager: a hung daemon fails the test rather than
// blocking it; it is not a timed assertion.
const waitBound = 90 * time.Second

// nic is a veth to create: its kernel name, and its MAC ("" for a random one).
type nic struct{ name, mac string }

func startJudge(t *testing.T, nics []nic, keyfiles []Keyfile) *judge {
	t.Helper()
	testenv.Root(t, "NetworkManager runs in a network namespace of its own")
	nm := testenv.Tool(t, "NetworkManager", "network-manager")
	testenv.Tool(t, "nmcli", "network-manager")
	dbusDaemon := testenv.Tool(t, "dbus-daemon", "dbus")
	testenv.Tool(t, "ip", "iproute2")
	testenv.Tool(t, "unshare", "util-linux")
	testenv.Tool(t, "nsenter", "util-linux")
	// dbus-daemon's socket path must fit sun_path: a short directory of our own.
	dir, err := os.MkdirTemp("", "snonm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	j := &judge{t: t, ns: fmt.Sprintf("snonm%d-%d", os.Getpid(), judgeCount.Add(1)), dir: dir}
	kdir := filepath.Join(dir, "keyfiles")
	for _, d := range []string{kdir, filepath.Join(dir, "conf.d")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range keyfiles {
		if err := os.WriteFile(filepath.Join(kdir, k.Name), k.Data, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	j.run("ip", "netns", "add", j.ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "delete", j.ns).Run() })
	j.run("ip", "-n", j.ns, "link", "set", "lo", "up")
	for i, n := range nics {
		peer := fmt.Sprintf("snopeer%d", i)
		args := []string{"-n", j.ns, "link", "add", n.name}
		if n.mac != "" {
			args = append(args, "address", n.mac)
		}
		j.run("ip", append(args, "type", "veth", "peer", "name", peer)...)
		j.run("ip", "-n", j.ns, "link", "set", peer, "up")
	}

	// A copy of the system bus's configuration on a socket of our own.
	sysConf, err := os.ReadFile("/usr/share/dbus-1/system.conf")
	if err != nil {
		testenv.Missing(t, "no /usr/share/dbus-1/system.conf (Debian package dbus): %v", err)
	}
	socket := filepath.Join(dir, "bus")
	var conf []string
	for _, line := range strings.Split(string(sysConf), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "<user>"), strings.HasPrefix(trimmed, "<pidfile>"):
			continue
		case strings.HasPrefix(trimmed, "<listen>"):
			line = "<listen>unix:path=" + socket + "</listen>"
		case trimmed == "<includedir>system.d</includedir>":
			line = "<includedir>/usr/share/dbus-1/system.d</includedir>"
		}
		conf = append(conf, line)
	}
	busConf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(busConf, []byte(strings.Join(conf, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(dbusDaemon, "--config-file="+busConf, "--fork", "--print-pid").Output()
	if err != nil {
		t.Fatalf("dbus-daemon: %v", err)
	}
	var busPid int
	if _, err := fmt.Sscan(string(out), &busPid); err != nil {
		t.Fatalf("dbus-daemon printed %q, not its pid", out)
	}
	t.Cleanup(func() { stopPid(busPid) })
	j.busEnv = "DBUS_SYSTEM_BUS_ADDRESS=unix:path=" + socket

	nmConf := filepath.Join(dir, "NetworkManager.conf")
	if err := os.WriteFile(nmConf, []byte("[main]\nplugins=keyfile\ndns=none\nrc-manager=unmanaged\nhostname-mode=none\n"+
		"no-auto-default=*\n\n[keyfile]\npath="+kdir+"\n\n[logging]\nlevel=INFO\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Inside the private mount namespace: sysfs of the network namespace, and udev's
	// "initialised" marker for each device, which NetworkManager waits for.
	script := `set -e
mount --make-rprivate /
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /var/lib/NetworkManager
mkdir -p /run/udev/data
for d in /sys/class/net/*; do echo I:1 > /run/udev/data/n$(cat "$d/ifindex"); done
exec "$0" --no-daemon --config="$1" --config-dir="$2" --intern-config="$3" --state-file="$4"
`
	logPath := filepath.Join(dir, "nm.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--mount", "nsenter", "--net=/run/netns/"+j.ns, "sh", "-c", script, nm,
		nmConf, filepath.Join(dir, "conf.d"), filepath.Join(dir, "intern.conf"), filepath.Join(dir, "state"))
	cmd.Env = append(os.Environ(), j.busEnv)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logFile.Close(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			log, _ := os.ReadFile(logPath)
			t.Logf("NetworkManager's log:\n%s", log)
		}
	})
	// NetworkManager is ready when it has read every keyfile.
	j.await(fmt.Sprintf("NetworkManager to load %d profiles", len(keyfiles)), func() (bool, string) {
		select {
		case <-done:
			t.Fatalf("NetworkManager exited; see its log")
		default:
		}
		out, err := j.nmcli("-t", "-f", "NAME", "connection", "show")
		return err == nil && len(strings.Fields(out)) >= len(keyfiles), out
	})
	return j
}

// stopPid ends a daemon that is not our child (dbus-daemon forks) and waits, bounded, for
// it to be gone, so that a test leaves no process behind.
func stopPid(pid int) {
	if syscall.Kill(pid, syscall.SIGTERM) != nil {
		return
	}
	for range 50 {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

func (j *judge) run(name string, args ...string) string {
	j.t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		j.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (j *judge) nmcli(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "nmcli", args...)
	cmd.Env = append(os.Environ(), j.busEnv)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("nmcli %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// settings returns NetworkManager's reading of a profile's settings, one field at a time (a
// setting the profile lacks is an error, not a shifted line), without nmcli's escapes.
func (j *judge) settings(id string, fields ...string) map[string]string {
	j.t.Helper()
	m := map[string]string{}
	for _, f := range fields {
		out, err := j.nmcli("-g", f, "connection", "show", id)
		if err != nil {
			j.t.Errorf("%s has no %s: %v", id, f, err)
			continue
		}
		m[f] = strings.NewReplacer(`\\`, `\`, `\:`, ":").Replace(strings.TrimSuffix(out, "\n"))
	}
	return m
}

// await polls cond until it holds, failing the test past waitBound.
// cond says what it saw when it does not hold.
func (j *judge) await(what string, cond func() (bool, string)) {
	j.t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			j.t.Fatalf("gave up waiting for %s; last saw: %s", what, saw)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
