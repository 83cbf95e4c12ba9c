//go:build linux

package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// benchNodes measures `sno-iso serve` with many nodes (bootstrap-in-place configs as genbip
// writes them): each node's ISO asked for once (a 1 KiB range, which prepares the node and
// composes its ISO), round-robin, twice over. It prints the server's resident memory after
// each pass and its peak, and the CPU time per node prepared: the node cache bounds the
// memory whatever the number of nodes.
func benchNodes(sno, tmp string, counts []int) {
	iso := smallISO(sno, tmp)
	config := filepath.Join(tmp, "node.ign")
	// The smallest config genbip writes: the installer's structure alone (about 145 kB).
	bip := exec.Command("go", "run", "./scripts/genbip", "-size", "0", "-o", config)
	bip.Stderr = os.Stderr
	if err := bip.Run(); err != nil {
		fatalf("generating a bootstrap-in-place config: %v", err)
	}
	raw, err := os.ReadFile(config)
	if err != nil {
		fatal(err)
	}
	for _, n := range counts {
		nodes := filepath.Join(tmp, fmt.Sprintf("nodes-%d", n))
		for i := range n {
			dir := filepath.Join(nodes, fmt.Sprintf("node%05d", i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "bootstrap-in-place-for-live-iso.ign"), raw, 0o644); err != nil {
				fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "sno.yaml"), []byte("coreOSInstallation:\n  installationDisk: "+
				"/dev/disk/by-id/wwn-0x5000c500a0b1c2d3\n"), 0o644); err != nil {
				fatal(err)
			}
		}
		server, base := startServer(sno, iso, nodes, "--open")
		pid := server.Process.Pid
		cpuBefore, start := cpuTime(pid), time.Now()
		var rss [2]int64
		for pass := range 2 {
			for i := range n {
				rangeGet(fmt.Sprintf("%s/node%05d.iso", base, i))
				// A long run says where it is, so that one cut short still has its figures.
				if done := pass*n + i + 1; done%1000 == 0 {
					log.Printf("nodes: %d of %d asked for (pass %d): RSS %d MiB, peak %d MiB, CPU %v per node",
						done, 2*n, pass+1, currentRSS(pid)>>10, peakRSS(pid)>>10, ((cpuTime(pid) - cpuBefore) / time.Duration(done)).Round(time.Millisecond))
				}
			}
			rss[pass] = currentRSS(pid)
		}
		perNode := (cpuTime(pid) - cpuBefore) / time.Duration(2*n)
		wall := time.Since(start) / time.Duration(2*n)
		fmt.Printf("| `sno-iso serve`, %d nodes (%d kB configs) each asked for its ISO, round-robin twice | %v per node "+
			"(CPU %v) | | %d MiB; after each pass: %d, %d MiB |\n",
			n, len(raw)/1000, wall.Round(time.Microsecond), perNode.Round(time.Microsecond), peakRSS(pid)>>10, rss[0]>>10, rss[1]>>10)
		server.Process.Signal(syscall.SIGTERM)
		server.Wait()
		os.RemoveAll(nodes)
	}
}

// smallISO builds a live ISO look-alike with a 4 MiB rootfs in tmp: for the cases that
// measure the server, not the size of what it sends.
func smallISO(sno, tmp string) string {
	iso := filepath.Join(tmp, "small-lookalike.iso")
	if _, err := os.Stat(iso); err == nil {
		return iso
	}
	cmd := exec.Command("scripts/mkliveiso", "--rootfs-size", "4M", iso)
	cmd.Env = append(os.Environ(), "SNO_ISO="+sno)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fatalf("scripts/mkliveiso: %v", err)
	}
	return iso
}

// rangeGet asks for the first KiB of url.
func rangeGet(url string) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Range", "bytes=0-1023")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		fatalf("GET %s: %s", url, resp.Status)
	}
}
