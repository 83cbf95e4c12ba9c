package main

import (
	"io"
	"os"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestProgressBarOnlyOnATerminal: a long copy shows a progress bar when standard error is a
// terminal, and nothing when it is piped or the copy is short.
func TestProgressBarOnlyOnATerminal(t *testing.T) {
	master, terminal := openPTY(t)
	onTerminal := cli.NewContext(newApp(nil, io.Discard, terminal), nil, nil)

	if opts, done := progress(onTerminal, progressThreshold-1); opts.Progress != nil {
		done()
		t.Fatal("a progress bar for a short copy")
	}
	opts, done := progress(onTerminal, progressThreshold)
	if opts.Progress == nil {
		t.Fatal("no progress bar on a terminal")
	}
	opts.Progress(progressThreshold / 2)
	done()
	wantByteCountOnTerminal(t, master)

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	piped := cli.NewContext(newApp(nil, io.Discard, w), nil, nil)
	if opts, done := progress(piped, progressThreshold); opts.Progress != nil {
		done()
		t.Fatal("a progress bar on a pipe")
	}
}
