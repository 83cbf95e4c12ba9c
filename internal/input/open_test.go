package input

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
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

// A pipe the shell names through a descriptor (`-i <(cat config.ign)`, `-i /dev/stdin`) is
// what the user meant to give, and is read to its end.
func TestReadFileReadsDescriptorPipe(t *testing.T) {
	if _, err := os.Stat("/dev/fd"); err != nil {
		testenv.Missing(t, "no /dev/fd on this system")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := `{"ignition":{"version":"3.2.0"}}`
	go func() {
		w.WriteString(want)
		w.Close()
	}()
	path := "/dev/fd/" + strconv.Itoa(int(r.Fd()))
	got, err := ReadFile(path, 1<<20, "an Ignition config")
	if err != nil || string(got) != want {
		t.Fatalf("ReadFile(%s) = %q, %v; want %q", path, got, err, want)
	}
}

// A URL given where a file is read (a scheme the command does not fetch) fails as a missing
// file, without its password or query in the error.
func TestOpenURLPathHidesCredentials(t *testing.T) {
	for _, u := range []string{"ftp://u:hunter2@h/x.iso?X-Amz-Signature=SIGSECRET", "HTTP://u:hunter2@h/x.iso?sig=SIGSECRET"} {
		_, _, err := Open(u, os.O_RDONLY)
		if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "SIGSECRET") ||
			!strings.Contains(err.Error(), "h/x.iso") || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v", u, err)
		}
	}
}
