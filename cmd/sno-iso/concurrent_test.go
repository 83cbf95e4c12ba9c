package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// concurrently runs the two command lines at once, the first started first, and returns their
// results.
func concurrently(t *testing.T, stdin []byte, a, b []string) (result, result) {
	t.Helper()
	var wg sync.WaitGroup
	var ra, rb result
	wg.Add(2)
	go func() { defer wg.Done(); ra = sno(t, stdin, a...) }()
	go func() { defer wg.Done(); rb = sno(t, stdin, b...) }()
	wg.Wait()
	return ra, rb
}

// TestConcurrentInPlaceEdits: two in-place edits of one ISO at once, in both orders, each
// keep what the other wrote: the second waits for the first's lock and reads its result.
func TestConcurrentInPlaceEdits(t *testing.T) {
	const rounds = 12
	key := filepath.Join(keyfileDir(t), "a.nmconnection")
	cfg := filepath.Join(t.TempDir(), "c.ign")
	writeFile(t, cfg, smallConfig)
	t.Run("network and ignition", func(t *testing.T) {
		for i := range 2 * rounds {
			iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
			network := []string{"network", "embed", "-f", "-k", key, iso}
			ignition := []string{"ignition", "embed", "-f", "-i", cfg, iso}
			if i%2 == 1 {
				network, ignition = ignition, network
			}
			ra, rb := concurrently(t, nil, network, ignition)
			if ra.code != 0 || rb.code != 0 {
				t.Fatalf("round %d: exits %d and %d: %s%s", i, ra.code, rb.code, ra.stderr, rb.stderr)
			}
			if got := string(mustSno(t, nil, "ignition", "show", iso)); got != smallConfig {
				t.Fatalf("round %d: the Ignition config was lost: %q", i, got)
			}
			if got := string(mustSno(t, nil, "network", "extract", iso)); !strings.Contains(got, "id=a") {
				t.Fatalf("round %d: the keyfile was lost: %q", i, got)
			}
		}
	})
	t.Run("two kargs modify", func(t *testing.T) {
		for i := range rounds {
			iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
			ra, rb := concurrently(t, nil, []string{"kargs", "modify", "-a", "first=1", iso}, []string{"kargs", "modify", "-a", "second=2", iso})
			if ra.code != 0 || rb.code != 0 {
				t.Fatalf("round %d: exits %d and %d: %s%s", i, ra.code, rb.code, ra.stderr, rb.stderr)
			}
			// kargs show fails when the areas disagree.
			got := showKargs(t, iso)
			if !strings.Contains(got, "first=1") || !strings.Contains(got, "second=2") {
				t.Fatalf("round %d: kargs %q lost an edit", i, got)
			}
		}
	})
}

// TestInPlaceEditWaitsForLock: an editor that finds the ISO locked waits, then edits what the
// lock holder left; a reader does not wait.
func TestInPlaceEditWaitsForLock(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	release := holdEditLock(t, iso)
	defer release()
	done := make(chan result, 1)
	go func() { done <- sno(t, nil, "kargs", "modify", "-a", "waited=1", iso) }()
	// Readers are not held up by the editor's lock, and see no edit while it is held.
	for range 20 {
		if got := showKargs(t, iso); strings.Contains(got, "waited=1") {
			t.Fatalf("the edit ran while the ISO was locked: %q", got)
		}
	}
	select {
	case r := <-done:
		t.Fatalf("the edit finished while the ISO was locked: exit %d %s", r.code, r.stderr)
	default:
	}
	release()
	if r := <-done; r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := showKargs(t, iso); !strings.Contains(got, "waited=1") {
		t.Fatalf("kargs %q", got)
	}
}

// holdEditLock takes the exclusive lock of an in-place editor on path in another process,
// flock(1), as a real editor would, and returns the function that releases it.
func holdEditLock(t *testing.T, path string) (release func()) {
	t.Helper()
	testenv.Tool(t, "flock", "util-linux")
	// flock(1) holds the lock until its stdin closes.
	holder := exec.Command("flock", "-x", path, "-c", "echo locked; exec cat")
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		stdin.Close()
		holder.Wait()
		t.Fatalf("flock did not take the lock: %q %v", line, err)
	}
	var once sync.Once
	release = func() { once.Do(func() { stdin.Close(); holder.Wait() }) }
	t.Cleanup(release)
	return release
}

// TestCopyWaitsForInPlaceEdit: a copy written with -o does not read the ISO while an in-place
// editor holds it, so that it never mixes two versions; once the editor is done it is written.
func TestCopyWaitsForInPlaceEdit(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	cfg := writeFile(t, filepath.Join(t.TempDir(), "c.ign"), smallConfig)
	copyPath := filepath.Join(t.TempDir(), "copy.iso")
	release := holdEditLock(t, iso)
	done := make(chan result, 1)
	go func() { done <- sno(t, nil, "ignition", "embed", "-i", cfg, "-o", copyPath, iso) }()
	for range 20 {
		if r := showKargs(t, iso); r == "" {
			t.Fatal("kargs show printed nothing")
		}
	}
	select {
	case r := <-done:
		t.Fatalf("the copy was written while an editor held the ISO: exit %d %s", r.code, r.stderr)
	default:
	}
	if _, err := os.Stat(copyPath); err == nil {
		t.Fatal("the copy exists while an editor holds the ISO")
	}
	release()
	if r := <-done; r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := string(mustSno(t, nil, "ignition", "show", copyPath)); got != smallConfig {
		t.Errorf("the copy holds %q", got)
	}
}
