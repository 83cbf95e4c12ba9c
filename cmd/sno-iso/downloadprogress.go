package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"time"

	"github.com/cheggaaa/pb/v3"
)

const (
	// barThreshold is the download size from which a progress bar is worth drawing.
	barThreshold = 1 << 20
	// plainInterval spaces the progress lines written where no terminal redraws a bar.
	plainInterval = 5 * time.Second
)

// downloadProgress draws downloads on standard error: a bar with bytes, rate and ETA on a
// terminal, otherwise a plain line at most every plainInterval, for logs.
type downloadProgress struct {
	w        io.Writer
	terminal bool
	bar      *pb.ProgressBar
	// verb starts the line that announces a transfer: "Downloading", or "Uploading".
	verb string

	name           string
	total          int64
	lastLine       time.Time
	lastHave, have int64
}

func newDownloadProgress(w io.Writer) *downloadProgress {
	f, ok := w.(*os.File)
	return &downloadProgress{w: w, terminal: ok && isTerminal(f), verb: "Downloading"}
}

// uploading is a progress that draws uploads on the same writer.
func (p *downloadProgress) uploading() *downloadProgress {
	return &downloadProgress{w: p.w, terminal: p.terminal, verb: "Uploading"}
}

func (p *downloadProgress) Start(url string, have, total int64) {
	p.finish()
	p.name, p.total, p.have, p.lastHave, p.lastLine = path.Base(url), total, have, have, time.Now()
	if have > 0 {
		fmt.Fprintf(p.w, "Resuming %s at %s of %s\n", url, mib(have), mib(total))
	} else {
		fmt.Fprintf(p.w, "%s %s (%s)\n", p.verb, url, mib(total))
	}
	if p.terminal && (total < 0 || total >= barThreshold) {
		p.bar = pb.Full.Start64(max(total, 0)).Set(pb.Bytes, true).SetWriter(p.w).SetCurrent(have)
	}
}

func (p *downloadProgress) Update(have int64) {
	p.have = have
	if p.bar != nil {
		p.bar.SetCurrent(have)
		return
	}
	if p.terminal || time.Since(p.lastLine) < plainInterval {
		return
	}
	rate := float64(have-p.lastHave) / time.Since(p.lastLine).Seconds()
	p.lastLine, p.lastHave = time.Now(), have
	percent := ""
	if p.total > 0 {
		percent = fmt.Sprintf(" (%d%%)", have*100/p.total)
	}
	fmt.Fprintf(p.w, "%s: %s of %s%s, %s/s\n", p.name, mib(have), mib(p.total), percent, mib(int64(rate)))
}

func (p *downloadProgress) Retry(url string, err error, wait time.Duration) {
	p.finish()
	fmt.Fprintf(p.w, "Retrying %s in %v: %v\n", url, wait.Round(time.Millisecond), err)
}

func (p *downloadProgress) Wait(lock string) {
	p.finish()
	fmt.Fprintf(p.w, "Waiting for another sno-iso downloading into the cache (%s)\n", lock)
}

// finish ends the current bar, so that the next line starts clean.
func (p *downloadProgress) finish() {
	if p.bar != nil {
		p.bar.SetCurrent(p.have).Finish()
		p.bar = nil
	}
}

// mib formats a byte count; a negative one is an unknown size.
func mib(n int64) string {
	switch {
	case n < 0:
		return "unknown size"
	case n < 1<<20:
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
