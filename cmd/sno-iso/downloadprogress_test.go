package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestDownloadProgressPlainLines: off a terminal, progress is a line per event, and byte
// counts at most every plainInterval.
func TestDownloadProgressPlainLines(t *testing.T) {
	var log bytes.Buffer
	p := newDownloadProgress(&log)
	p.Start("http://127.0.0.1/rhcos-live-iso.x86_64.iso", 0, 100<<20)
	p.Update(10 << 20)
	p.Update(20 << 20)
	if got := strings.Count(log.String(), "\n"); got != 1 {
		t.Fatalf("%d lines within the interval, want only the start: %q", got, log.String())
	}
	p.lastLine = time.Now().Add(-plainInterval)
	p.Update(50 << 20)
	p.Retry("http://127.0.0.1/rhcos-live-iso.x86_64.iso", errors.New("connection reset by peer"), 2*time.Second)
	p.Start("http://127.0.0.1/rhcos-live-iso.x86_64.iso", 50<<20, 100<<20)
	want := []string{
		"Downloading http://127.0.0.1/rhcos-live-iso.x86_64.iso (100.0 MiB)",
		"rhcos-live-iso.x86_64.iso: 50.0 MiB of 100.0 MiB (50%), ",
		"Retrying http://127.0.0.1/rhcos-live-iso.x86_64.iso in 2s: connection reset by peer",
		"Resuming http://127.0.0.1/rhcos-live-iso.x86_64.iso at 50.0 MiB of 100.0 MiB",
	}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("lines %q, want %d", lines, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want %q", i, lines[i], w)
		}
	}
}

// TestDownloadProgressBarOnATerminal: a terminal gets a bar with byte counts.
func TestDownloadProgressBarOnATerminal(t *testing.T) {
	master, terminal := openPTY(t)
	p := newDownloadProgress(terminal)
	p.Start("http://127.0.0.1/rhcos-live-iso.x86_64.iso", 0, 8<<20)
	if p.bar == nil {
		t.Fatal("no bar on a terminal")
	}
	p.Update(4 << 20)
	p.finish()
	wantByteCountOnTerminal(t, master)
}

// wantByteCountOnTerminal asserts that what the terminal's master end reads next shows a
// byte count, as a progress bar does.
func wantByteCountOnTerminal(t *testing.T, master *os.File) {
	t.Helper()
	shown := make(chan []byte, 1)
	go func() {
		buf := make([]byte, 4096)
		n, _ := master.Read(buf)
		shown <- buf[:n]
	}()
	select {
	case out := <-shown:
		if !bytes.Contains(out, []byte("MiB")) {
			t.Fatalf("the terminal shows %q, not a byte count", out)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing reached the terminal")
	}
}
