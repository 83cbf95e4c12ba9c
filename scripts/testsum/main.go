// Command testsum runs `go test -json` commands and prints what a person reads from plain
// go test (the package lines, and the output of failed and skipped tests), then the skipped
// and failed tests by name and a closing line "N passed, N failed, N skipped". It exits
// non-zero when a command fails or a test fails, so a CI log shows what did not run.
//
//	go run ./scripts/testsum [-json FILE] -- go test -json ARGS... [--- go test -json ARGS...]
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// event is one line of test2json's output (go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// key names a test within its package.
type key struct{ pkg, test string }

// summary accumulates a run's events.
type summary struct {
	out     io.Writer
	pending map[key][]string // output of tests not yet ended, printed if they fail or skip
	passed  int
	failed  []string
	skipped []string // "pkg TestName: reason"
	// testFailed records packages with a failed test, to count a package that fails without
	// one (a build failure, a panic in TestMain, a timeout) as a failure of its own.
	testFailed map[string]bool
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, pending: map[key][]string{}, testFailed: map[string]bool{}}
}

// read consumes a test2json stream; lines that are not JSON (go's own errors) are printed.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(s.out, sc.Text())
			continue
		}
		s.add(e)
	}
	return sc.Err()
}

func (s *summary) add(e event) {
	k := key{e.Package, e.Test}
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.out, e.Output)
	case e.Test == "" && e.Action == "output":
		if e.Output != "PASS\n" {
			fmt.Fprint(s.out, e.Output)
		}
	case e.Test == "" && e.Action == "fail":
		// Tests still running when the package failed (a timeout, a panic) show their output.
		for pk, lines := range s.pending {
			if pk.pkg == e.Package {
				fmt.Fprint(s.out, strings.Join(lines, ""))
				delete(s.pending, pk)
			}
		}
		if !s.testFailed[e.Package] {
			s.failed = append(s.failed, e.Package+" (the package failed: see its output above)")
		}
	case e.Test == "":
	case e.Action == "output":
		s.pending[k] = append(s.pending[k], e.Output)
	case e.Action == "pass":
		s.passed++
		delete(s.pending, k)
	case e.Action == "fail":
		s.testFailed[e.Package] = true
		s.failed = append(s.failed, e.Package+" "+e.Test)
		fmt.Fprint(s.out, strings.Join(s.pending[k], ""))
		delete(s.pending, k)
	case e.Action == "skip":
		s.skipped = append(s.skipped, e.Package+" "+e.Test+skipReason(s.pending[k]))
		fmt.Fprint(s.out, strings.Join(s.pending[k], ""))
		delete(s.pending, k)
	}
}

// skipReason is the last message a skipped test logged (t.Skip's), or "".
func skipReason(lines []string) string {
	for _, l := range slices.Backward(lines) {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "===") {
			return ": " + l
		}
	}
	return ""
}

// report prints the skipped and failed tests and the closing line.
func (s *summary) report() {
	fmt.Fprintln(s.out)
	for _, name := range s.skipped {
		fmt.Fprintln(s.out, "skipped:", name)
	}
	for _, name := range s.failed {
		fmt.Fprintln(s.out, "failed:", name)
	}
	fmt.Fprintf(s.out, "%d passed, %d failed, %d skipped\n", s.passed, len(s.failed), len(s.skipped))
}

// commands splits the arguments after -- into commands at each "---".
func commands(args []string) [][]string {
	var cmds [][]string
	for len(args) > 0 {
		i := slices.Index(args, "---")
		if i < 0 {
			i = len(args)
		}
		if i > 0 {
			cmds = append(cmds, args[:i])
		}
		args = args[min(i+1, len(args)):]
	}
	return cmds
}

func main() {
	jsonFile := flag.String("json", "", "also write the test2json events to `FILE`")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testsum [-json FILE] -- go test -json ARGS... [--- go test -json ARGS...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	cmds := commands(flag.Args())
	if len(cmds) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var events io.Writer = io.Discard
	if *jsonFile != "" {
		f, err := os.Create(*jsonFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(2)
		}
		defer f.Close()
		events = f
	}
	s := newSummary(os.Stdout)
	for _, argv := range cmds {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "testsum: %s: %v\n", strings.Join(argv, " "), err)
			os.Exit(2)
		}
		before := len(s.failed)
		readErr := s.read(io.TeeReader(stdout, events))
		// go test exits 1 after failed tests, already counted; any other failure of the
		// command (a bad flag, a killed go) counts once.
		if err := errors.Join(cmd.Wait(), readErr); err != nil && len(s.failed) == before {
			s.failed = append(s.failed, fmt.Sprintf("%s: %v", strings.Join(argv, " "), err))
		}
	}
	s.report()
	if len(s.failed) > 0 {
		os.Exit(1)
	}
}
