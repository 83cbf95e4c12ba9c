package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// `inspect FIFO` used to wait in open(2) for a writer, deaf to Ctrl-C: it fails at once,
// naming the file and what an ISO must be. The bound only keeps a regression from hanging
// the test run.
func TestInspectNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "rhcos-live.iso")
	fixtures.NamedPipe(t, fifo)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := runSno(t, exec.CommandContext(ctx, snoISO(t), "inspect", fifo))
	if ctx.Err() != nil {
		t.Fatal("inspect of a named pipe did not return")
	}
	wantFailure(t, r, fifo, "a named pipe", "not a regular file or block device")
}
