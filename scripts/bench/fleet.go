//go:build linux

package main

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sno-iso/sno-iso/internal/nginx"
)

// fleetClients is how many whole downloads run at once in the fleet measurement.
const fleetClients = 8

// benchFleet measures what one serve replica of a fleet delivers: the aggregate throughput
// of 8 concurrent whole downloads of a node's ISO, with the base ISO a local file and with
// it streamed by URL from nginx (no local copy), against nginx sending the same ISO prebuilt by `sno-iso build`,
// alternating in each round. A TCP relay in front of nginx shows the least that reading from
// an origin costs. It also reports the replicas' peak RSS, the origin bytes read per
// download, and where the CPU time went. It prints rows of the table main prints.
func benchFleet(sno, iso, config, tmp string, rounds int) {
	if nginx.Binary() == "" {
		fmt.Printf("| fleet measurements skipped: %v | | | |\n", nginx.ErrNotInstalled)
		return
	}
	defer stopStarted()
	peer, www, nodes := fleetFiles(sno, iso, config, filepath.Join(tmp, "fleet"))
	prebuilt := filepath.Join(www, "sno.iso")
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer.Port)
	local, localBase := startServer(sno, iso, nodes)
	// Streaming every download from the origin, which is what this case measures; by
	// default a replica serves from its local copy once made, as from a local file.
	remote, remoteBase := startServer(sno, peerURL+"/rhcos-live.iso", nodes, "--iso-copy-dir", "none")

	relay, relayAddr := startRelay(fmt.Sprintf("127.0.0.1:%d", peer.Port))

	// The node's capability URL on each replica; both read the secret in the nodes directory.
	peerISO, localISO, remoteISO := peerURL+"/sno.iso", servedISOURL(sno, nodes, localBase), servedISOURL(sno, nodes, remoteBase)
	relayISO := "http://" + relayAddr + "/sno.iso"
	// The same bytes from all four, which also prepares the node and warms the caches.
	want := fileSHA256(prebuilt)
	for _, u := range []string{peerISO, localISO, relayISO, remoteISO} {
		h := sha256.New()
		download(u, h)
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
			fatalf("%s is not what sno-iso build wrote", u)
		}
	}
	st, err := os.Stat(prebuilt)
	if err != nil {
		fatal(err)
	}
	cases := []*fleetCase{
		{url: peerISO},
		{url: localISO, pid: local.Process.Pid},
		{url: relayISO, pid: relay.Process.Pid},
		{url: remoteISO, pid: remote.Process.Pid},
	}
	peerCase, localCase, relayCase, remoteCase := cases[0], cases[1], cases[2], cases[3]
	originBefore := metric(remoteBase, "sno_iso_origin_bytes_total")
	for round := range rounds {
		// Each round starts with another case: none is always timed furthest from nginx
		// while the other jobs on the machine come and go.
		for i := range cases {
			c := cases[(round+i)%len(cases)]
			r, cpu := timedCPU(peer.Pid(), c.pid, func() { downloadConcurrently(c.url, fleetClients) })
			c.runs, c.cpu = append(c.runs, r), append(c.cpu, cpu)
		}
		for _, c := range cases[1:] {
			c.ratios = append(c.ratios, ratio(c.runs[round], peerCase.runs[round]))
		}
	}
	perDownload := (metric(remoteBase, "sno_iso_origin_bytes_total") - originBefore) / float64(fleetClients*rounds)
	total := float64(fleetClients * st.Size())
	gbps := func(r run) float64 { return total / r.wall.Seconds() / 1e9 }
	p, l, rl, r := median(peerCase.runs), median(localCase.runs), median(relayCase.runs), median(remoteCase.runs)
	fmt.Printf("| nginx (`sendfile on`, %d workers): "+
		"%d concurrent downloads of the node's ISO prebuilt by `sno-iso build` (%.2f GB/s in all) | %v | 1.00 | |\n",
		runtime.NumCPU(), fleetClients, gbps(p), p.wall.Round(time.Millisecond))
	fmt.Printf("| `sno-iso serve`, base ISO a local file: the same %d downloads (%.2f GB/s) | %v | %s vs nginx | %d MiB |\n",
		fleetClients, gbps(l), l.wall.Round(time.Millisecond), ratioRange(localCase.ratios), peakRSS(local.Process.Pid)>>10)
	fmt.Printf("| a TCP relay in front of the same nginx, its bytes spliced by the kernel, no HTTP: "+
		"the floor of serving from an origin (%.2f GB/s) | %v | %s vs nginx | |\n",
		gbps(rl), rl.wall.Round(time.Millisecond), ratioRange(relayCase.ratios))
	fmt.Printf("| `sno-iso serve --iso-copy-dir none`, base ISO streamed by URL from nginx: the same %d downloads (%.2f GB/s; "+
		"%.3f ISO sizes read from the origin per download) | %v | %s vs nginx | %d MiB |\n",
		fleetClients, gbps(r), perDownload/float64(st.Size()), r.wall.Round(time.Millisecond),
		ratioRange(remoteCase.ratios), peakRSS(remote.Process.Pid)>>10)
	gib := total / (1 << 30)
	fmt.Printf("\nCPU time per GiB delivered, medians of the rounds: " +
		"nginx (the server, or the origin), the process between nginx and the clients, the clients, and all three.\n\n")
	fmt.Println("| case | nginx | between | clients | all |")
	fmt.Println("|---|---|---|---|---|")
	for _, c := range []struct {
		name string
		c    *fleetCase
	}{{"nginx", peerCase}, {"serve, local file", localCase}, {"TCP relay", relayCase}, {"serve, by URL", remoteCase}} {
		m := medianSplit(c.c.cpu)
		fmt.Printf("| %s | %v | %v | %v | %v |\n",
			c.name, perGiB(m.nginx, gib), perGiB(m.between, gib), perGiB(m.clients, gib), perGiB(m.all, gib))
	}
}

// fleetFiles makes a nodes directory in dir with one node, "sno", and a directory www that
// holds that node's ISO prebuilt by `sno-iso build` (sno.iso) and the base ISO
// (rhcos-live.iso), served by an nginx it starts on 127.0.0.1.
func fleetFiles(sno, iso, config, dir string) (peer *nginx.Server, www, nodes string) {
	www = filepath.Join(dir, "www")
	node := filepath.Join(dir, "nodes", "sno")
	for _, d := range []string{www, node} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fatal(err)
		}
	}
	ign := filepath.Join(node, "bootstrap-in-place-for-live-iso.ign")
	snoYAML := filepath.Join(node, "sno.yaml")
	execute("cp", config, ign)
	if err := os.WriteFile(snoYAML, []byte("coreOSInstallation:\n  installationDisk: "+
		"/dev/disk/by-id/wwn-0x5000c500a0b1c2d3\n"), 0o644); err != nil {
		fatal(err)
	}
	execute(sno, "build", "--iso", iso, "--ignition", ign, "--config", snoYAML, "-o", filepath.Join(www, "sno.iso"))
	abs, err := filepath.Abs(iso)
	if err != nil {
		fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(www, "rhcos-live.iso")); err != nil {
		fatal(err)
	}
	// One worker per CPU, as Debian configures nginx; serve uses every CPU too.
	peer, err = nginx.Start(dir, runtime.NumCPU(), func(port int) string {
		return fmt.Sprintf("sendfile on; tcp_nopush on; server { listen 127.0.0.1:%d; root %s; }", port, www)
	})
	if err != nil {
		fatal(err)
	}
	stopAtEnd(peer.Stop)
	return peer, www, filepath.Dir(node)
}

// fleetCase is one server of the fleet measurement and what each round measured of it.
type fleetCase struct {
	url    string
	pid    int // the process between nginx and the clients; 0 for nginx itself
	runs   []run
	cpu    []cpuSplit
	ratios []float64 // to nginx's time in the same round
}

// downloadConcurrently downloads url n times at once, each to /dev/null.
func downloadConcurrently(url string, n int) {
	concurrently(n, func() { download(url, io.Discard) })
}

// concurrently runs f n times at once and waits for them all.
func concurrently(n int, f func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(f)
	}
	wg.Wait()
}

// ratioRange is the median of the per-round ratios, with their smallest and largest.
func ratioRange(ratios []float64) string {
	s := slices.Sorted(slices.Values(ratios))
	return fmt.Sprintf("%.2f (%.2f to %.2f)", s[len(s)/2], s[0], s[len(s)-1])
}

func fileSHA256(path string) string {
	f, err := os.Open(path)
	if err != nil {
		fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// metric reads one unlabelled sample from a server's /metrics.
func metric(base, name string) float64 {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	fatalf("%s/metrics has no %s", base, name)
	return 0
}

// cpuSplit is the CPU time one case used: nginx's workers (the server, or the origin), the
// process between nginx and the clients (a serve replica, or the relay), the clients (this
// process), and their sum.
type cpuSplit struct{ nginx, between, clients, all time.Duration }

// timedCPU times f as timed does, with the CPU time the nginx workers under nginxPid, the
// process between (when not 0) and this process used during it.
func timedCPU(nginxPid, between int, f func()) (run, cpuSplit) {
	before := cpuNow(nginxPid, between)
	r := timed(f)
	after := cpuNow(nginxPid, between)
	c := cpuSplit{nginx: after.nginx - before.nginx, between: after.between - before.between, clients: after.clients - before.clients}
	c.all = c.nginx + c.between + c.clients
	return r, c
}

func cpuNow(nginxPid, between int) cpuSplit {
	var c cpuSplit
	for _, w := range children(nginxPid) {
		c.nginx += cpuTime(w)
	}
	if between != 0 {
		c.between = cpuTime(between)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fatal(err)
	}
	c.clients = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return c
}

// children are the processes pid started (nginx's workers).
func children(pid int) []int {
	path := fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)
	raw, err := os.ReadFile(path)
	if err != nil {
		fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(raw)) {
		p, err := strconv.Atoi(f)
		if err != nil {
			fatalf("%s: %v", path, err)
		}
		pids = append(pids, p)
	}
	return pids
}

// medianSplit is the median of each part on its own.
func medianSplit(splits []cpuSplit) cpuSplit {
	pick := func(part func(cpuSplit) time.Duration) time.Duration {
		v := make([]time.Duration, len(splits))
		for i, s := range splits {
			v[i] = part(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return cpuSplit{
		nginx:   pick(func(s cpuSplit) time.Duration { return s.nginx }),
		between: pick(func(s cpuSplit) time.Duration { return s.between }),
		clients: pick(func(s cpuSplit) time.Duration { return s.clients }),
		all:     pick(func(s cpuSplit) time.Duration { return s.all }),
	}
}

func perGiB(d time.Duration, gib float64) time.Duration {
	return time.Duration(float64(d) / gib).Round(time.Millisecond)
}

// startRelay runs this program as a TCP relay to target (see runRelay) and returns the
// address it listens on.
func startRelay(target string) (*exec.Cmd, string) {
	self, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	cmd := exec.Command(self, "-relay", target)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	stopAtEnd(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		fatalf("the relay did not start: %v", err)
	}
	return cmd, strings.TrimSpace(addr)
}

// runRelay forwards every connection to a loopback port of its own to target, and prints
// that port's address. The answers are spliced from one connection to the other by the
// kernel (TCPConn.ReadFrom): the least work a server that reads the ISO from an origin over
// TCP can do, with no HTTP, no patches and no checks.
func runRelay(target string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal(err)
	}
	fmt.Println(ln.Addr())
	for {
		client, err := ln.Accept()
		if err != nil {
			fatal(err)
		}
		go func() {
			defer client.Close()
			origin, err := net.Dial("tcp", target)
			if err != nil {
				log.Printf("relay: %v", err)
				return
			}
			defer origin.Close()
			go io.Copy(origin, client)
			io.Copy(client, origin)
		}()
	}
}
