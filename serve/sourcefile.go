package serve

import (
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

// sourceFile is what artifacts read from (an open file, or any other reader of an ISO's
// bytes), with what identifies its contents.
type sourceFile struct {
	f    io.ReaderAt
	info os.FileInfo // nil when f is not an *os.File
	// id names the contents for ETags: the same id means the same bytes.
	id string
	// procPath reopens the same file as a new open file description, with its own offset,
	// so each request can hand the kernel a file to sendfile from; empty when f is not a
	// file.
	procPath string

	// local is the local copy of f when f is an origin's object, while it is written and
	// after (see localCopy); it is set on the copy's own sourceFile too, to hold it open.
	local atomic.Pointer[localCopy]

	// owner closes a file that one node owns (its grown ISO) once the node is replaced and
	// no request reads it any more; nil for files that live as long as their ISO version.
	owner   io.Closer
	mu      sync.Mutex
	refs    int
	retired bool
}

// hold keeps the file open for a request until release; false when it was retired and may
// be closed already. Files without an owner are always held.
func (f *sourceFile) hold() bool {
	if f == nil || f.owner == nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.retired {
		return false
	}
	f.refs++
	return true
}

func (f *sourceFile) release() {
	if f == nil || f.owner == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refs--
	if f.retired && f.refs == 0 {
		f.owner.Close()
	}
}

// retire closes an owned file now, or when the last request holding it ends.
func (f *sourceFile) retire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.retired && f.refs == 0 {
		f.owner.Close()
	}
	f.retired = true
}

func newSourceFile(r io.ReaderAt, id string) (*sourceFile, error) {
	f, ok := r.(*os.File)
	if !ok {
		return &sourceFile{f: r, id: id}, nil
	}
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return &sourceFile{f: f, info: info, id: id, procPath: "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))}, nil
}
