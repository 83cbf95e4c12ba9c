package node

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/input"
)

// A keyfile that is a named pipe is refused, naming the file: waiting in open(2) for a writer
// would block the node's preparation for good, and with it every request of a server.
func TestLoadRefusesNamedPipeKeyfile(t *testing.T) {
	dir := writeNodeDir(t, "coreOSInstallation:\n  installationDisk: "+testDisk+"\nnetwork:\n  keyfiles: [eth0.nmconnection]\n")
	fifo := filepath.Join(dir, "eth0.nmconnection")
	fixtures.NamedPipe(t, fifo)
	_, files, err := Load(DirInputs(dir))
	if !errors.Is(err, input.ErrNotRegular) || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "must be a regular file") {
		t.Fatalf("got %v, want the keyfile refused as not a regular file", err)
	}
	if !slices.Contains(files, fifo) {
		t.Errorf("the files read %v leave out the pipe: a server would not notice it replaced", files)
	}
}
