package input

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// A named pipe without a writer would block open(2) forever: it is refused at once, naming
// the file and what it must be.
func TestReadFileRefusesNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "keyfile.nmconnection")
	fixtures.NamedPipe(t, fifo)
	_, err := ReadFile(fifo, 1<<20, "a NetworkManager keyfile")
	if !errors.Is(err, ErrNotRegular) {
		t.Fatalf("got %v, want ErrNotRegular", err)
	}
	for _, want := range []string{fifo, "a named pipe", "a NetworkManager keyfile must be a regular file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if _, err := os.Stat(fifo); err != nil {
		t.Errorf("the pipe is gone: %v", err)
	}
}
