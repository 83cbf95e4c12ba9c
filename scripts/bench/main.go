//go:build linux

// Command bench measures sno-iso against the physical limit, `cp` of the same file, in one
// run: each case is timed alternately with cp, several rounds, and the medians are compared.
// It prints Markdown tables for docs/performance.md.
//
//	go run ./scripts/bench -sno-iso bin/sno-iso [-iso big.iso] [-rounds 5] [-only download|fleet|s3]
//
// Without -iso it builds a 1 GiB RHCOS look-alike with scripts/mkliveiso. The download case
// compares with curl instead of cp; -only download runs it alone. It runs on Linux only: it
// reads the server's CPU time and memory from /proc.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// run is one timed execution of a command.
type run struct {
	wall   time.Duration
	maxRSS int64 // KiB
}

func execute(name string, args ...string) run {
	// Start every timed run with no dirty pages left by the previous one, whose writeback
	// would otherwise be charged to whichever command runs next.
	if err := exec.Command("sync").Run(); err != nil {
		fatalf("sync: %v", err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		fatalf("%s %v: %v", name, args, err)
	}
	r := run{wall: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss
	}
	return r
}

func median(runs []run) run {
	walls := make([]time.Duration, len(runs))
	rss := make([]int64, len(runs))
	for i, r := range runs {
		walls[i], rss[i] = r.wall, r.maxRSS
	}
	slices.Sort(walls)
	slices.Sort(rss)
	return run{wall: walls[len(walls)/2], maxRSS: rss[len(rss)-1]}
}

// started holds how to stop each server a case started: the case stops them when it ends,
// and fatal stops them too, since log.Fatal skips deferred calls and would leave them running.
var (
	startedMu sync.Mutex
	started   []func()
)

// stopAtEnd registers stop for the end of the case, or for fatal.
func stopAtEnd(stop func()) {
	startedMu.Lock()
	defer startedMu.Unlock()
	started = append(started, stop)
}

// stopStarted stops the servers started so far, the last one first.
func stopStarted() {
	startedMu.Lock()
	defer startedMu.Unlock()
	for _, stop := range slices.Backward(started) {
		stop()
	}
	started = nil
}

func fatal(v ...any) {
	stopStarted()
	log.Fatal(v...)
}

func fatalf(format string, v ...any) {
	stopStarted()
	log.Fatalf(format, v...)
}

func main() {
	sno := flag.String("sno-iso", "bin/sno-iso", "the sno-iso binary to measure")
	iso := flag.String("iso", "", "a large live ISO (default: build a 1 GiB look-alike)")
	rounds := flag.Int("rounds", 7, "rounds per case")
	only := flag.String("only", "", "run only this case: download, fleet (serve replicas against nginx), s3 (serve with the base "+
		"ISO in an S3 store against nginx), nodes (serve with 1,000 and 10,000 nodes) or headers (serve's memory after a burst "+
		"of slow headers)")
	s3Object := flag.String("s3-object", "", "with -only s3: measure against this s3://BUCKET/KEY (the ISO is put there) "+
		"instead of a local SeaweedFS, reached with AWS_ENDPOINT_URL_S3, AWS_REGION, the AWS credential chain and AWS_CA_BUNDLE")
	s3PathStyle := flag.Bool("s3-path-style", false, "with -s3-object: address the bucket in the path, as most on-premises stores need")
	downloadSize := flag.Int64("download-size", 1<<30, "bytes of the file the download case fetches")
	nodeCounts := intsFlag("nodes", []int{1000, 10000}, "with -only nodes: the numbers of nodes, comma-separated")
	relay := flag.String("relay", "", "run as the fleet case's TCP relay to this HOST:PORT (the fleet case starts it)")
	flag.Parse()
	log.SetFlags(0)
	if *relay != "" {
		runRelay(*relay)
		return
	}

	tmp, err := os.MkdirTemp("", "sno-iso-bench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	switch *only {
	case "":
	case "download":
		printTableHeader()
		benchDownload(*sno, tmp, *downloadSize, *rounds)
		return
	case "nodes":
		printTableHeader()
		benchNodes(*sno, tmp, *nodeCounts)
		return
	case "headers":
		benchHeaderBurst(*sno, tmp)
		return
	case "fleet", "s3":
	default:
		fatalf("-only %q: the cases that run alone are download, fleet, s3, nodes and headers", *only)
	}
	if *iso == "" {
		*iso = filepath.Join(tmp, "rhcos-lookalike-1g.iso")
		log.Printf("building a 1 GiB look-alike ISO in %s", tmp)
		// With miniso.dat, so that both ways of making a minimal ISO can be measured.
		cmd := exec.Command("scripts/mkliveiso", "--rootfs-size", "1000M", *iso)
		cmd.Env = append(os.Environ(), "SNO_ISO="+*sno)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fatalf("scripts/mkliveiso: %v", err)
		}
	}
	st, err := os.Stat(*iso)
	if err != nil {
		fatal(err)
	}
	config := filepath.Join(tmp, "config.ign")
	bip := exec.Command("go", "run", "./scripts/genbip", "-size", "300000", "-o", config)
	bip.Stderr = os.Stderr
	if err := bip.Run(); err != nil {
		fatalf("generating a bootstrap-in-place config: %v", err)
	}
	switch *only {
	case "fleet":
		fmt.Printf("ISO: %d MiB, %d rounds, medians.\n\n", st.Size()>>20, *rounds)
		printTableHeader()
		benchFleet(*sno, *iso, config, tmp, *rounds)
		return
	case "s3":
		fmt.Printf("ISO: %d MiB, %d rounds, medians.\n\n", st.Size()>>20, *rounds)
		printTableHeader()
		benchS3(*sno, *iso, config, tmp, *rounds, *s3Object, *s3PathStyle)
		return
	}
	inPlace := filepath.Join(tmp, "inplace.iso")
	execute("cp", *iso, inPlace)
	out := filepath.Join(tmp, "out.iso")

	minimal := filepath.Join(tmp, "minimal.iso")
	const rootfsURL = "http://192.0.2.1/rootfs.img"
	// cp of a file as large as the minimal ISO is the physical limit for making one.
	execute(*sno, "minimal", "--rootfs-url", rootfsURL, *iso, minimal)
	minSt, err := os.Stat(minimal)
	if err != nil {
		fatal(err)
	}
	sameSize := filepath.Join(tmp, "same-size.img")
	execute("sh", "-c", `head -c "$1" "$2" >"$3"`, "sh", fmt.Sprint(minSt.Size()), *iso, sameSize)
	smallConfig := filepath.Join(tmp, "small.ign")
	if err := os.WriteFile(smallConfig, []byte(`{"ignition": {"version": "3.2.0"}}`), 0o644); err != nil {
		fatal(err)
	}
	var cp, cpSync, embedOut, embedInPlace, embedInPlaceSmall, buildOut, cpSameSize, minimalMiniso, minimalRebuild []run
	for range *rounds {
		os.Remove(out)
		cp = append(cp, execute("cp", *iso, out))
		os.Remove(out)
		cpSync = append(cpSync, execute("sh", "-c", `cp "$1" "$2" && sync "$2"`, "sh", *iso, out))
		os.Remove(out)
		embedOut = append(embedOut, execute(*sno, "ignition", "embed", "-f", "-i", config, "-o", out, *iso))
		embedInPlace = append(embedInPlace, execute(*sno, "ignition", "embed", "-f", "-i", config, inPlace))
		embedInPlaceSmall = append(embedInPlaceSmall, execute(*sno, "ignition", "embed", "-f", "-i", smallConfig, inPlace))
		os.Remove(out)
		buildOut = append(buildOut, execute(*sno, "build", "--iso", *iso, "--ignition", config,
			"--installation-disk", "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3", "-o", out))
		os.Remove(out)
		cpSameSize = append(cpSameSize, execute("cp", sameSize, out))
		os.Remove(minimal)
		minimalMiniso = append(minimalMiniso, execute(*sno, "minimal", "--rootfs-url", rootfsURL, *iso, minimal))
		os.Remove(minimal)
		minimalRebuild = append(minimalRebuild, execute(*sno, "minimal", "--rebuild", "--rootfs-url", rootfsURL, *iso, minimal))
	}
	c, cs, eo, ei := median(cp), median(cpSync), median(embedOut), median(embedInPlace)
	fmt.Printf("ISO: %d MiB, %d rounds, medians; sno-iso writes durably (fsync before rename).\n\n", st.Size()>>20, *rounds)
	printTableHeader()
	fmt.Printf("| `cp` | %v | 1.00 | %d MiB |\n", c.wall.Round(time.Millisecond), c.maxRSS>>10)
	fmt.Printf("| `cp` + `sync` | %v | %.2f | %d MiB |\n", cs.wall.Round(time.Millisecond), ratio(cs, c), cs.maxRSS>>10)
	fmt.Printf("| `sno-iso ignition embed -o` (300 kB bootstrap-in-place config) | %v | %.2f vs cp, %.2f vs cp + sync | %d MiB |\n",
		eo.wall.Round(time.Millisecond), ratio(eo, c), ratio(eo, cs), eo.maxRSS>>10)
	fmt.Printf("| `sno-iso ignition embed` in place (the same config) | %v | | %d MiB |\n", ei.wall.Round(time.Millisecond), ei.maxRSS>>10)
	es := median(embedInPlaceSmall)
	fmt.Printf("| `sno-iso ignition embed` in place (a 35-byte config) | %v | | %d MiB |\n", es.wall.Round(time.Millisecond), es.maxRSS>>10)
	bo := median(buildOut)
	fmt.Printf("| `sno-iso build -o` (same config, install-to-disk set) | %v | %.2f vs cp, %.2f vs cp + sync | %d MiB |\n",
		bo.wall.Round(time.Millisecond), ratio(bo, c), ratio(bo, cs), bo.maxRSS>>10)
	cm, mm, mr := median(cpSameSize), median(minimalMiniso), median(minimalRebuild)
	fmt.Printf("| `cp` of a file as large as the minimal ISO (%d MiB) | %v | 1.00 | %d MiB |\n",
		minSt.Size()>>20, cm.wall.Round(time.Millisecond), cm.maxRSS>>10)
	fmt.Printf("| `sno-iso minimal` from coreos/miniso.dat | %v | %.2f vs that cp, %.3f vs cp of the ISO | %d MiB |\n",
		mm.wall.Round(time.Millisecond), ratio(mm, cm), ratio(mm, c), mm.maxRSS>>10)
	fmt.Printf("| `sno-iso minimal --rebuild` (go-diskfs, hybrid MBR/GPT recreated) | %v | %.2f vs that cp, "+
		"%.3f vs cp of the ISO | %d MiB |\n",
		mr.wall.Round(time.Millisecond), ratio(mr, cm), ratio(mr, c), mr.maxRSS>>10)
	benchServe(*sno, *iso, config, tmp, *rounds)
	benchFleet(*sno, *iso, config, tmp, *rounds)
	benchS3(*sno, *iso, config, tmp, *rounds, *s3Object, *s3PathStyle)
	benchDownload(*sno, tmp, *downloadSize, *rounds)
	benchNodes(*sno, tmp, []int{1000, 10000})
	benchCapacity()
}

func printTableHeader() {
	fmt.Println("| measurement | time | ratio | peak RSS |")
	fmt.Println("|---|---|---|---|")
}

func ratio(a, b run) float64 { return float64(a.wall) / float64(b.wall) }

// intsFlag defines a flag of comma-separated integers.
func intsFlag(name string, value []int, usage string) *[]int {
	p := &value
	def := strings.Trim(strings.ReplaceAll(fmt.Sprint(value), " ", ","), "[]")
	flag.Func(name, fmt.Sprintf("%s (default %s)", usage, def), func(s string) error {
		var out []int
		for f := range strings.SplitSeq(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("%q is not a positive number", f)
			}
			out = append(out, n)
		}
		*p = out
		return nil
	})
	return p
}
