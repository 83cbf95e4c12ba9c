package isobuilder

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/filelock"
)

// A temporary directory whose removal was cut by SIGKILL after its lock file went, with
// some of its work left, is swept by the next run once it is older than the moment between
// creating a directory and its lock; a fresh one without a lock yet is left alone.
func TestSweepRemovesADirectoryCutMidRemoval(t *testing.T) {
	if !filelock.Supported {
		t.Skip("no advisory locks here: leftovers are removed by age alone, which another test covers")
	}
	dir := t.TempDir()
	d := testOutDir(t, dir)
	cut := func() string {
		td, err := createTempDir(d)
		if err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(td.workPath(), "data"), "x")
		td.lock.f.Close()
		// What RemoveAll left when the kill came: the lock file is gone, the work is not.
		if err := os.Remove(filepath.Join(dir, td.name, tempLockName)); err != nil {
			t.Fatal(err)
		}
		return td.name
	}
	old, fresh := cut(), cut()
	longAgo := time.Now().Add(-2 * newTempGrace)
	if err := os.Chtimes(filepath.Join(dir, old), longAgo, longAgo); err != nil {
		t.Fatal(err)
	}
	sweep(d, time.Now())
	assertOnly(t, dir, fresh)
}
