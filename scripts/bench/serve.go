//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// benchServe measures `sno-iso serve` over loopback against cp of the same ISO: a whole
// download of a node's customized ISO to a file and to /dev/null, alternating with cp, the
// server's CPU time per GiB sent, and the latency of 1 KiB range reads. It prints rows of
// the table main prints.
func benchServe(sno, iso, config, tmp string, rounds int) {
	nodes := filepath.Join(tmp, "nodes")
	node := filepath.Join(nodes, "sno")
	if err := os.MkdirAll(node, 0o755); err != nil {
		fatal(err)
	}
	raw, err := os.ReadFile(config)
	if err != nil {
		fatal(err)
	}
	if err := os.WriteFile(filepath.Join(node, "bootstrap-in-place-for-live-iso.ign"), raw, 0o644); err != nil {
		fatal(err)
	}
	if err := os.WriteFile(filepath.Join(node, "sno.yaml"), []byte("coreOSInstallation:\n  installationDisk: "+
		"/dev/disk/by-id/wwn-0x5000c500a0b1c2d3\n"), 0o644); err != nil {
		fatal(err)
	}
	defer stopStarted()
	server, base := startServer(sno, iso, nodes)
	url := servedISOURL(sno, nodes, base)
	size := download(url, io.Discard) // prepares the node and warms the page cache

	out := filepath.Join(tmp, "served.iso")
	var cp, toFile, toNull []run
	cpuBefore := cpuTime(server.Process.Pid)
	for range rounds {
		os.Remove(out)
		cp = append(cp, execute("cp", iso, out))
		os.Remove(out)
		toFile = append(toFile, timed(func() {
			f, err := os.Create(out)
			if err != nil {
				fatal(err)
			}
			download(url, f)
			f.Close()
		}))
		toNull = append(toNull, timed(func() { download(url, io.Discard) }))
	}
	cpuPerGiB := (cpuTime(server.Process.Pid) - cpuBefore) / time.Duration(2*rounds) * (1 << 30) / time.Duration(size)
	latencies := rangeLatencies(url, size, 1000)
	c, f, n := median(cp), median(toFile), median(toNull)
	gbps := func(r run) float64 { return float64(size) / r.wall.Seconds() / 1e9 }
	fmt.Printf("| `cp` of the ISO, timed alternately with the downloads below | %v | 1.00 | %d MiB |\n",
		c.wall.Round(time.Millisecond), c.maxRSS>>10)
	fmt.Printf("| `sno-iso serve`: whole customized ISO over loopback HTTP to a file (%.2f GB/s) | %v | %.2f vs cp | %d MiB (server) |\n",
		gbps(f), f.wall.Round(time.Millisecond), ratio(f, c), peakRSS(server.Process.Pid)>>10)
	fmt.Printf("| `sno-iso serve`: the same download to /dev/null (%.2f GB/s; server CPU %v per GiB, sendfile) | %v | %.2f vs cp | |\n",
		gbps(n), cpuPerGiB.Round(time.Millisecond), n.wall.Round(time.Millisecond), ratio(n, c))
	fmt.Printf("| `sno-iso serve`: 1 KiB range read, kept-alive connection (median of %d; p99 %v) | %v | | |\n",
		len(latencies), latencies[len(latencies)*99/100].Round(time.Microsecond), latencies[len(latencies)/2].Round(time.Microsecond))
}

// servedISOURL asks `sno-iso serve urls` for the node's capability URL.
func servedISOURL(sno, nodes, base string) string {
	out, err := exec.Command(sno, "serve", "urls", "--nodes", nodes, "--base-url", base, "--node", "sno").Output()
	if err != nil {
		fatalf("sno-iso serve urls: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "iso" {
			return f[2]
		}
	}
	fatalf("sno-iso serve urls printed no ISO URL: %q", out)
	return ""
}

// startServer runs sno-iso serve on a loopback port of its choosing and returns its URL.
func startServer(sno, iso, nodes string, flags ...string) (*exec.Cmd, string) {
	cmd := exec.Command(sno, append([]string{"serve", "--listen", "127.0.0.1:0", "--iso", iso, "--nodes", nodes}, flags...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	stopAtEnd(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			// The access log would only measure the terminal: keep the first line alone.
			if m := regexp.MustCompile(`at (http://\S+)/ `).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			fatal("sno-iso serve exited")
		}
		return cmd, u
	case <-time.After(30 * time.Second):
		fatal("sno-iso serve did not start")
	}
	return nil, ""
}

func download(url string, w io.Writer) int64 {
	resp, err := http.Get(url)
	if err != nil {
		fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil || resp.StatusCode != 200 || n != resp.ContentLength {
		fatalf("GET %s: %s, %d of %d bytes: %v", url, resp.Status, n, resp.ContentLength, err)
	}
	return n
}

// timed runs f in process, from a clean page cache as execute does.
func timed(f func()) run {
	if err := exec.Command("sync").Run(); err != nil {
		fatalf("sync: %v", err)
	}
	start := time.Now()
	f()
	return run{wall: time.Since(start)}
}

// rangeLatencies times n requests for 1 KiB at random offsets, sorted.
func rangeLatencies(url string, size int64, n int) []time.Duration {
	client := &http.Client{}
	buf := make([]byte, 1024)
	var out []time.Duration
	for range n {
		off := rand.Int64N(size - 1024)
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+1023))
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			fatal(err)
		}
		_, err = io.ReadFull(resp.Body, buf)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 206 {
			fatalf("range read: %s: %v", resp.Status, err)
		}
		out = append(out, time.Since(start))
	}
	slices.Sort(out)
	return out
}

// cpuTime is the user and system time a process used so far.
func cpuTime(pid int) time.Duration {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		fatal(err)
	}
	// The fields after the command name, which is in parentheses; utime and stime are
	// fields 14 and 15, in clock ticks (100 per second on Linux).
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	ticks := int64(0)
	for _, f := range fields[11:13] {
		v, _ := strconv.ParseInt(f, 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// peakRSS is a process's peak resident memory in KiB.
func peakRSS(pid int) int64 { return procStatusKiB(pid, "VmHWM:") }

// currentRSS is a process's resident memory now, in KiB.
func currentRSS(pid int) int64 { return procStatusKiB(pid, "VmRSS:") }

// procStatusKiB is the field of /proc/PID/status that counts KiB.
func procStatusKiB(pid int, field string) int64 {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kib
		}
	}
	return 0
}
