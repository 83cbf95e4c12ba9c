package main

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
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

// TestKilledOutputs SIGKILLs commands that write outputs at random moments of their run, a
// bounded number of times each, and checks what a user finds: an output name holds nothing
// or the complete output, never a part; on Linux no temporary file even right after the
// kill (they have no name until complete); and after the next run, the complete outputs and
// no temporary left anywhere.
func TestKilledOutputs(t *testing.T) {
	const rounds = 20
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
			completed := 0
			for round := range rounds {
				cmd := exec.Command(bin, tt.args(out)...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(rand.N(took))
				cmd.Process.Kill()
				cmd.Wait()
				got, temps := outputTree(t, dir)
				for name, b := range got {
					if !bytes.Equal(b, want[name]) {
						t.Fatalf("round %d: %s holds %d bytes that are not the complete output", round, name, len(b))
					}
				}
				if runtime.GOOS == "linux" && len(temps) > 0 {
					t.Fatalf("round %d: the kill left %v", round, temps)
				}
				if len(got) == len(want) {
					completed++
				}
				// The complete outputs go, as a user would remove them; anything else stays
				// for the next run to deal with.
				for name := range got {
					os.Remove(filepath.Join(dir, name))
				}
			}
			t.Logf("%d of %d runs were killed before their outputs were complete (a run takes %v)", rounds-completed, rounds, took)
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
