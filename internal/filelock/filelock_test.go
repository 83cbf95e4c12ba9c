package filelock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// open opens path as another holder would: locks belong to open files, so two opens in one
// process conflict as two processes do.
func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func try(t *testing.T, f *os.File, mode Mode) bool {
	t.Helper()
	ok, err := TryLock(f, mode)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestModes(t *testing.T) {
	if !Supported {
		t.Skip("no file locks on this platform: TryLock always succeeds")
	}
	path := filepath.Join(t.TempDir(), "lock")
	a, b, c := open(t, path), open(t, path), open(t, path)
	if !try(t, a, Exclusive) {
		t.Fatal("a free lock was refused")
	}
	if try(t, b, Exclusive) || try(t, b, Shared) {
		t.Fatal("a second holder got the lock beside an exclusive one")
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if !try(t, b, Shared) || !try(t, c, Shared) {
		t.Fatal("two shared holders were refused")
	}
	if try(t, a, Exclusive) {
		t.Fatal("an exclusive lock was granted beside shared ones")
	}
	b.Close()
	c.Close()
	if !try(t, a, Exclusive) {
		t.Fatal("closing the shared holders did not release their locks")
	}
}

func TestWait(t *testing.T) {
	if !Supported {
		t.Skip("no file locks on this platform: Wait always succeeds at once")
	}
	path := filepath.Join(t.TempDir(), "lock")
	holder, waiter := open(t, path), open(t, path)
	if !try(t, holder, Exclusive) {
		t.Fatal("a free lock was refused")
	}
	ctx := context.Background()
	if err := Wait(ctx, waiter, Shared, time.Millisecond, 0, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("no patience: %v, want ErrBusy", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := Wait(canceled, waiter, Exclusive, time.Hour, time.Hour, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("an ended context: %v, want context.Canceled", err)
	}
	// The holder goes away while the waiter waits: the waiter gets the lock.
	waits := 0
	release := func() { waits++; holder.Close() }
	if err := Wait(ctx, waiter, Exclusive, time.Millisecond, time.Hour, release); err != nil {
		t.Fatalf("after the holder closed: %v", err)
	}
	if waits != 1 {
		t.Fatalf("onWait called %d times, want once", waits)
	}
	if err := Unlock(waiter); err != nil {
		t.Fatal(err)
	}
	if err := Wait(ctx, open(t, path), Exclusive, time.Millisecond, 0, func() { t.Error("onWait on a free lock") }); err != nil {
		t.Fatalf("a free lock: %v", err)
	}
}
