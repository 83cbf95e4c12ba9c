package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/nodedir"
)

// `inspect FIFO` (and the drop-in's `dev show iso FIFO`) fails at once, naming the file and
// what an ISO must be, rather than waiting in open(2) for a writer, deaf to Ctrl-C. The bound only keeps a regression from hanging
// the test run.
func TestInspectNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "rhcos-live.iso")
	fixtures.NamedPipe(t, fifo)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, cmd := range []*exec.Cmd{
		exec.CommandContext(ctx, snoISO(t), "inspect", fifo),
		exec.CommandContext(ctx, dropInBinary(t), "dev", "show", "iso", fifo),
	} {
		r := runSno(t, cmd)
		if ctx.Err() != nil {
			t.Fatalf("%v of a named pipe did not return", cmd.Args)
		}
		wantFailure(t, r, fifo, "a named pipe", "not a regular file or block device")
	}
}

// Every option and argument that names a file to read refuses a named pipe at once, naming
// it, rather than waiting in open(2) for a writer, deaf to SIGTERM. The files are read
// before any network use: the BMC is a closed port of the loopback, and a server that got
// as far as listening would listen on the loopback only. The deadline only keeps a
// regression from hanging the test run.
func TestFileOptionsRefuseNamedPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	fixtures.NamedPipe(t, fifo)
	cert, key := fixtures.SelfSignedCert(t, dir)
	cfg := writeFile(t, filepath.Join(dir, "c.ign"), smallConfig)
	iso := filepath.Join(dir, "rhcos-live.iso")
	if err := os.WriteFile(iso, fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"), 0o644); err != nil {
		t.Fatal(err)
	}
	stream, err := filepath.Abs("../../download/testdata/rhcos-stream.json")
	if err != nil {
		t.Fatal(err)
	}
	// A node whose sno.yaml names a named pipe as its BMC credentials file.
	nodes := filepath.Join(dir, "nodes")
	nodeDir := filepath.Join(nodes, "sno1")
	if err := os.MkdirAll(nodeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	nodeFIFO := filepath.Join(nodeDir, "bmc-credentials.yaml")
	fixtures.NamedPipe(t, nodeFIFO)
	writeFile(t, filepath.Join(nodeDir, nodedir.ConfigFile), serveSnoYAML+"bmc:\n  address: https://127.0.0.1:1\n  credentialsFile: bmc-credentials.yaml\n")

	const bmc, image = "https://127.0.0.1:1", "http://127.0.0.1:9/sno.iso"
	cache := filepath.Join(dir, "cache")
	serveArgs := []string{"serve", "--listen", "127.0.0.1:0", "--nodes", nodes}
	build := []string{"build", "--ignition", cfg, "--installation-disk", "/dev/sda", "-o", filepath.Join(dir, "out.iso"), "--cache-dir", cache}
	cases := []struct {
		dropIn bool
		args   []string
		named  string
	}{
		{args: append(serveArgs, "--iso", iso, "--tls-cert", fifo, "--tls-key", key)},
		{args: append(serveArgs, "--iso", iso, "--tls-cert", cert, "--tls-key", fifo)},
		{args: append(serveArgs, "--stream", fifo, "--cache-dir", cache)},
		{args: bmcArgs("boot", "--bmc", bmc, "--iso-url", image, "--credentials-file", fifo)},
		{args: bmcArgs("boot", "--bmc", bmc, "--iso-url", image, "--ca-file", fifo)},
		{args: bmcArgs("boot", "--node", nodeDir, "--serve-url", "http://127.0.0.1:9", "--open"), named: nodeFIFO},
		{args: bmcArgs("status", "--bmc", bmc, "--ca-file", fifo)},
		{args: bmcArgs("eject", "--node", nodeDir), named: nodeFIFO},
		{args: append(build, "--stream", fifo)},
		{args: []string{"download", "--stream", fifo, "--cache-dir", cache}},
		{args: []string{"download", "--stream", stream, "--keyring", fifo, "--cache-dir", cache}},
		{args: []string{"pxe", "ignition", "unwrap", fifo}},
		{args: []string{"pxe", "ignition", "unwrap", fifo}, dropIn: true},
		{args: []string{"dev", "pack-minimal-iso", iso, fifo}},
	}
	for _, tc := range cases {
		named := tc.named
		if named == "" {
			named = fifo
		}
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			bin := snoISO(t)
			if tc.dropIn {
				bin = dropInBinary(t)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, tc.args...)
			cmd.Env = environWithoutBMCAccount()
			r := runSno(t, cmd)
			if ctx.Err() != nil {
				t.Fatalf("%v did not return: it waits on the named pipe", tc.args)
			}
			wantFailure(t, r, named, "a named pipe", "regular file")
		})
	}
}
