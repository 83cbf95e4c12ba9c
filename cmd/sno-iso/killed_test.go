package main

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/nodedir"
)

// outputTree reads the regular files in dir and its subdirectories by their path relative to
// dir, and lists the entries named like sno-iso's temporaries.
func outputTree(t *testing.T, dir string) (files map[string][]byte, temps []string) {
	t.Helper()
	files = map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".sno-iso") {
			temps = append(temps, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			if files[rel], err = os.ReadFile(p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, temps
}

// TestKilledOutputs SIGKILLs commands that write outputs, some rounds at random moments of
// their run and others as soon as a temporary output is seen open, and checks what a user
// finds: an output name holds nothing or the complete output, never a part; on Linux no
// temporary file even right after the kill (they have no name until complete); and after
// the next run, the complete outputs and no temporary left anywhere. Only kills that landed
// while an output was being written count, and each command must have at least
// minKilledWriting of them.
func TestKilledOutputs(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		testenv.Missing(t, "no /proc/self/fd to see the temporaries a process has open: %v", err)
	}
	const minKilledWriting, maxRounds = 5, 80
	iso, pxeISO := fixtures.File(t, "embed-areas-2023-07.x86_64.iso"), withInitramfs(t, stockLiveInitramfs(t))
	inputs := t.TempDir()
	ign := bipConfig(t, inputs, 150000)
	cfg := writeFile(t, filepath.Join(inputs, nodedir.ConfigFile), serveSnoYAML)
	for _, tt := range []struct {
		name string
		args func(out string) []string
	}{
		{"build -o", func(out string) []string {
			return []string{"build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", out}
		}},
		{"ignition embed -o", func(out string) []string { return []string{"ignition", "embed", "-i", ign, "-o", out, iso} }},
		{"pxe build -o DIR", func(out string) []string {
			return []string{"pxe", "build", "--iso", pxeISO, "--ignition", ign, "--config", cfg, "-o", out}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			refDir := t.TempDir()
			bin := snoISO(t) // built before the clock starts
			start := time.Now()
			mustSno(t, nil, tt.args(filepath.Join(refDir, "out"))...)
			took := time.Since(start) // only bounds the random moments; nothing asserts on time
			want, _ := outputTree(t, refDir)

			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			completed, killedWriting, partial, round := 0, 0, 0, 0
			for ; round < maxRounds && (round < 20 || killedWriting < minKilledWriting); round++ {
				cmd := exec.Command(bin, tt.args(out)...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				exited := make(chan struct{})
				go func() { cmd.Wait(); close(exited) }()
				size := int64(-1) // of the temporary output open at the kill, -1 for none
				if round%2 == 0 {
					time.Sleep(rand.N(took))
					size = openTemporary(cmd.Process.Pid, dir)
				} else {
					for size < 0 && !isDone(exited) {
						size = openTemporary(cmd.Process.Pid, dir)
					}
				}
				cmd.Process.Kill()
				<-exited
				got, temps := outputTree(t, dir)
				for name, b := range got {
					if !bytes.Equal(b, want[name]) {
						t.Fatalf("round %d: %s holds %d bytes that are not the complete output", round, name, len(b))
					}
				}
				if runtime.GOOS == "linux" && len(temps) > 0 {
					t.Fatalf("round %d: the kill left %v", round, temps)
				}
				switch {
				case len(got) == len(want):
					completed++
				case size >= 0:
					killedWriting++
					if size > 0 && size < wantSize(want) {
						partial++
					}
				}
				// The complete outputs go, as a user would remove them; anything else stays
				// for the next run to deal with.
				for name := range got {
					os.Remove(filepath.Join(dir, name))
				}
			}
			t.Logf("%d runs: %d killed while writing an output (%d with it partly written), %d completed first (a run takes %v)",
				round, killedWriting, partial, completed, took)
			if killedWriting < minKilledWriting {
				t.Errorf("only %d of %d kills landed while an output was being written, want at least %d", killedWriting, round, minKilledWriting)
			}
			mustSno(t, nil, tt.args(out)...)
			got, temps := outputTree(t, dir)
			if len(got) != len(want) {
				t.Errorf("after the next run: %d files, want %d", len(got), len(want))
			}
			for name, b := range want {
				if !bytes.Equal(got[name], b) {
					t.Errorf("after the next run: %s differs from a run never killed", filepath.Join(dir, name))
				}
			}
			if len(temps) > 0 {
				t.Errorf("after the next run: %v left", temps)
			}
		})
	}
}

// openTemporary returns the size of a file that process pid has open for its output in dir
// (or a directory under it) and that has no name there yet: an unnamed O_TMPFILE, which
// /proc shows as "#inode (deleted)", or a named .sno-iso temporary. It returns -1 when
// there is none.
func openTemporary(pid int, dir string) int64 {
	fds := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, _ := os.ReadDir(fds)
	for _, e := range ents {
		fd := filepath.Join(fds, e.Name())
		target, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(target, dir+"/") {
			continue
		}
		base := filepath.Base(target)
		if !strings.HasPrefix(base, "#") && !strings.HasPrefix(base, ".sno-iso") {
			continue
		}
		if info, err := os.Stat(fd); err == nil && info.Mode().IsRegular() {
			return info.Size()
		}
	}
	return -1
}

// wantSize is the size of the largest complete output.
func wantSize(want map[string][]byte) int64 {
	var n int64
	for _, b := range want {
		n = max(n, int64(len(b)))
	}
	return n
}

func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
