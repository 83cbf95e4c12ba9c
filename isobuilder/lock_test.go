//go:build unix

package isobuilder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
)

// TestOpenForEditLock: one editor at a time; a second one is refused once its wait is over
// (here none), readers are not held up, and closing releases the lock.
func TestOpenForEditLock(t *testing.T) {
	path := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	ctx := context.Background()
	first, err := OpenForEdit(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenForEdit(ctx, path, 0); !errors.Is(err, ErrLocked) {
		t.Fatalf("second editor: got %v, want ErrLocked", err)
	}
	reader, err := Open(path)
	if err != nil {
		t.Fatalf("a reader was held up by the editor: %v", err)
	}
	reader.Close()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := OpenForEdit(canceled, path, 1<<40); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled wait: got %v", err)
	}
	first.Close()
	second, err := OpenForEdit(ctx, path, 0)
	if err != nil {
		t.Fatalf("after the first editor closed: %v", err)
	}
	second.Close()
}

// TestOpenToCopyLock: readers that copy share the ISO with each other, never with an editor:
// each waits for the other, and closing lets the other in.
func TestOpenToCopyLock(t *testing.T) {
	path := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	ctx := context.Background()
	editor, err := OpenForEdit(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenToCopy(ctx, path, 0); !errors.Is(err, ErrLocked) {
		t.Fatalf("a copy during an edit: got %v, want ErrLocked", err)
	}
	editor.Close()
	first, err := OpenToCopy(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	second, err := OpenToCopy(ctx, path, 0)
	if err != nil {
		t.Fatalf("a second copy beside the first: %v", err)
	}
	if _, err := OpenForEdit(ctx, path, 0); !errors.Is(err, ErrLocked) {
		t.Fatalf("an edit during copies: got %v, want ErrLocked", err)
	}
	first.Close()
	second.Close()
	editor, err = OpenForEdit(ctx, path, 0)
	if err != nil {
		t.Fatalf("an edit after the copies: %v", err)
	}
	editor.Close()
}

// TestOpenForEditRefusesReadOnly: an ISO without write permission is not edited in place, by
// root either: someone made it read-only to keep it.
func TestOpenForEditRefusesReadOnly(t *testing.T) {
	testenv.Root(t, "only root can open a read-only file for writing, so only root reaches the check")
	path := filepath.Join(t.TempDir(), "ro.iso")
	if err := os.WriteFile(path, fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"), 0o444); err != nil {
		t.Fatal(err)
	}
	_, err := OpenForEdit(context.Background(), path, 0)
	if !errors.Is(err, ErrReadOnlyISO) {
		t.Fatalf("got %v, want ErrReadOnlyISO", err)
	}
	copied, err := OpenToCopy(context.Background(), path, 0)
	if err != nil {
		t.Fatalf("a copy of a read-only ISO: %v", err)
	}
	copied.Close()
}
