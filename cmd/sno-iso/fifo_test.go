package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// `inspect FIFO` (and the drop-in's `dev show iso FIFO`) used to wait in open(2) for a writer, deaf to Ctrl-C: it fails at once,
// naming the file and what an ISO must be. The bound only keeps a regression from hanging
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
