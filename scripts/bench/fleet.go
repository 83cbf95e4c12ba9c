//go:build linux

package main

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
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
// it read by URL from nginx, against nginx sending the same ISO prebuilt by `sno-iso build`,
// alternating in each round. It also reports the replicas' peak RSS and the origin bytes
// read per download. It prints rows of the table main prints.
func benchFleet(sno, iso, config, tmp string, rounds int) {
	if nginx.Binary() == "" {
		fmt.Printf("| fleet measurements skipped: %v | | | |\n", nginx.ErrNotInstalled)
		return
	}
	dir := filepath.Join(tmp, "fleet")
	www := filepath.Join(dir, "www")
	node := filepath.Join(dir, "nodes", "sno")
	for _, d := range []string{www, node} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			log.Fatal(err)
		}
	}
	ign := filepath.Join(node, "bootstrap-in-place-for-live-iso.ign")
	snoYAML := filepath.Join(node, "sno.yaml")
	execute("cp", config, ign)
	if err := os.WriteFile(snoYAML, []byte("coreOSInstallation:\n  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	prebuilt := filepath.Join(www, "sno.iso")
	execute(sno, "build", "--iso", iso, "--ignition", ign, "--config", snoYAML, "-o", prebuilt)
	abs, err := filepath.Abs(iso)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(www, "rhcos-live.iso")); err != nil {
		log.Fatal(err)
	}
	// One worker per CPU, as Debian configures nginx; serve uses every CPU too.
	peer, err := nginx.Start(dir, runtime.NumCPU(), func(port int) string {
		return fmt.Sprintf("sendfile on; tcp_nopush on; server { listen 127.0.0.1:%d; root %s; }", port, www)
	})
	if err != nil {
		log.Fatal(err)
	}
	defer peer.Stop()
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer.Port)
	nodes := filepath.Dir(node)
	local, localBase := startServer(sno, iso, nodes)
	remote, remoteBase := startServer(sno, peerURL+"/rhcos-live.iso", nodes)
	defer func() {
		for _, s := range []*os.Process{local.Process, remote.Process} {
			s.Signal(syscall.SIGTERM)
		}
		local.Wait()
		remote.Wait()
	}()

	// The node's capability URL on each replica; both read the secret in the nodes directory.
	peerISO, localISO, remoteISO := peerURL+"/sno.iso", servedISOURL(sno, nodes, localBase), servedISOURL(sno, nodes, remoteBase)
	// The same bytes from all three, which also prepares the node and warms the caches.
	want := fileSHA256(prebuilt)
	for _, u := range []string{peerISO, localISO, remoteISO} {
		h := sha256.New()
		download(u, h)
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
			log.Fatalf("%s is not what sno-iso build wrote", u)
		}
	}
	st, err := os.Stat(prebuilt)
	if err != nil {
		log.Fatal(err)
	}
	originBefore := metric(remoteBase, "sno_iso_origin_bytes_total")
	var peerRuns, localRuns, remoteRuns []run
	var localRatios, remoteRatios []float64
	for range rounds {
		p := timed(func() { downloadConcurrently(peerISO) })
		l := timed(func() { downloadConcurrently(localISO) })
		r := timed(func() { downloadConcurrently(remoteISO) })
		peerRuns, localRuns, remoteRuns = append(peerRuns, p), append(localRuns, l), append(remoteRuns, r)
		localRatios, remoteRatios = append(localRatios, ratio(l, p)), append(remoteRatios, ratio(r, p))
	}
	perDownload := (metric(remoteBase, "sno_iso_origin_bytes_total") - originBefore) / float64(fleetClients*rounds)
	total := float64(fleetClients * st.Size())
	gbps := func(r run) float64 { return total / r.wall.Seconds() / 1e9 }
	p, l, r := median(peerRuns), median(localRuns), median(remoteRuns)
	fmt.Printf("| nginx (`sendfile on`, %d workers): %d concurrent downloads of the node's ISO prebuilt by `sno-iso build` (%.2f GB/s in all) | %v | 1.00 | |\n",
		runtime.NumCPU(), fleetClients, gbps(p), p.wall.Round(time.Millisecond))
	fmt.Printf("| `sno-iso serve`, base ISO a local file: the same %d downloads (%.2f GB/s) | %v | %s vs nginx | %d MiB |\n",
		fleetClients, gbps(l), l.wall.Round(time.Millisecond), ratioRange(localRatios), peakRSS(local.Process.Pid)>>10)
	fmt.Printf("| `sno-iso serve`, base ISO by URL from nginx: the same %d downloads (%.2f GB/s; %.3f ISO sizes read from the origin per download) | %v | %s vs nginx | %d MiB |\n",
		fleetClients, gbps(r), perDownload/float64(st.Size()), r.wall.Round(time.Millisecond), ratioRange(remoteRatios), peakRSS(remote.Process.Pid)>>10)
}

// downloadConcurrently downloads url fleetClients times at once, each to /dev/null.
func downloadConcurrently(url string) {
	var wg sync.WaitGroup
	for range fleetClients {
		wg.Go(func() { download(url, io.Discard) })
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
		log.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		log.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// metric reads one unlabelled sample from a server's /metrics.
func metric(base, name string) float64 {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				log.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	log.Fatalf("%s/metrics has no %s", base, name)
	return 0
}
