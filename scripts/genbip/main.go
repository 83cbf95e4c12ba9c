// Command genbip writes a realistic bootstrap-in-place Ignition config of an exact size,
// reproducible from a seed, for tests and benchmarks:
//
//	go run ./scripts/genbip -size 262144 -seed 1 -o bip.ign
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/sno-iso/sno-iso/internal/bipgen"
)

func main() {
	var opts bipgen.Options
	flag.IntVar(&opts.Size, "size", 300_000, "exact size of the JSON output in bytes (0: the installer's structure alone)")
	flag.Uint64Var(&opts.Seed, "seed", 1, "seed of the keys, certificates and secrets")
	flag.StringVar(&opts.Version, "version", "3.2.0", "Ignition spec version")
	flag.StringVar(&opts.Disk, "disk", "/dev/sda", "installation disk of the installer's install-to-disk.sh")
	output := flag.String("o", "", "output file (required)")
	flag.Parse()
	if *output == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: genbip [-size BYTES] [-seed N] [-version V] [-disk DEV] -o FILE")
		os.Exit(2)
	}
	out, err := bipgen.Generate(opts)
	if err == nil {
		err = os.WriteFile(*output, out, 0o600)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
