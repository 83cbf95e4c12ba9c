package isobuilder

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// An ISO path naming a named pipe is refused at once by readers and in-place editors alike,
// instead of waiting in open(2) for a writer that never comes.
func TestOpenRefusesNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "rhcos-live.iso")
	fixtures.NamedPipe(t, fifo)
	_, err := Open(fifo)
	if !errors.Is(err, ErrNotISOFile) || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "a named pipe") {
		t.Errorf("Open: got %v, want the pipe refused by name", err)
	}
	_, err = OpenForEdit(context.Background(), fifo, 0)
	if !errors.Is(err, ErrNotISOFile) || !strings.Contains(err.Error(), fifo) {
		t.Errorf("OpenForEdit: got %v, want the pipe refused by name", err)
	}
}
