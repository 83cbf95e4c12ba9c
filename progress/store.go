package progress

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Store keeps the records of each node. Add records a report unless the node already
// reported the same; it tells whether it added it.
type Store interface {
	Add(node string, rec Record) (added bool, err error)
	Records(node string) ([]Record, error)
}

// Bounds of what a store keeps for one node, however many reports arrive: one record of each
// phase, and the last maxFailures distinct failures (a unit with Restart=on-failure fails
// again every few seconds).
const (
	maxFailures = 8
	// maxRecordLine is a record's line at its largest: a log JSON-escapes to at most twice
	// its size once DecodeReport dropped its control characters.
	maxRecordLine = 2*MaxLog + 4<<10
	// MaxFileSize bounds a node's file in a FileStore: its records at their largest.
	MaxFileSize = (phaseCount - 1 + 2*maxFailures) * maxRecordLine
	phaseCount  = 8 // len(Phases)
)

// MemoryStore keeps records in memory, for a server that keeps no state of its own (a fleet
// replica, whose log and metrics carry them on).
type MemoryStore struct {
	mu    sync.Mutex
	nodes map[string][]Record
}

// Add implements Store.
func (m *MemoryStore) Add(node string, rec Record) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.nodes == nil {
		m.nodes = map[string][]Record{}
	}
	records := m.nodes[node]
	for _, r := range records {
		if same(r.Report, rec.Report) {
			return false, nil
		}
	}
	if rec.Phase == Failed && countFailures(records) >= maxFailures {
		records = dropOldestFailure(records)
	}
	m.nodes[node] = append(records, rec)
	return true, nil
}

// Records implements Store.
func (m *MemoryStore) Records(node string) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Record(nil), m.nodes[node]...), nil
}

func countFailures(records []Record) int {
	n := 0
	for _, r := range records {
		if r.Phase == Failed {
			n++
		}
	}
	return n
}

func dropOldestFailure(records []Record) []Record {
	for i, r := range records {
		if r.Phase == Failed {
			return append(records[:i:i], records[i+1:]...)
		}
	}
	return records
}

// FileStore keeps each node's records in Dir/<node>.jsonl, one JSON object a line, appended
// with one write each: a crash leaves at most a cut last line, which reading skips. Like a
// MemoryStore it keeps the last failures: once the file holds 2*maxFailures of them (or
// MaxFileSize bytes), it is rewritten with the last maxFailures, so a failure report is never
// refused for space. Dir is made 0700 (a looser one is tightened) and a symbolic link at a
// node's file is refused, never written through: the records carry failure journals.
type FileStore struct {
	Dir string
	// Log, when set, is told when Dir's mode was tightened.
	Log func(format string, args ...any)

	mu sync.Mutex
}

// FilePath is where a FileStore over dir keeps node's records.
func FilePath(dir, node string) string {
	return filepath.Join(dir, node+".jsonl")
}

// ErrLink is a node's file in a FileStore that is a symbolic link: it is neither read nor
// written through.
var ErrLink = errors.New("is a symbolic link, not a progress file")

// Add implements Store.
func (s *FileStore) Add(node string, rec Record) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.makeDir(); err != nil {
		return false, err
	}
	path := FilePath(s.Dir, node)
	records, size, err := readNoFollow(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	for _, r := range records {
		if same(r.Report, rec.Report) {
			return false, nil
		}
	}
	line, err := marshalRecord(rec)
	if err != nil {
		return false, err
	}
	if size+int64(len(line))+1 > int64(MaxFileSize) || rec.Phase == Failed && countFailures(records) >= 2*maxFailures {
		for countFailures(records) >= maxFailures {
			records = dropOldestFailure(records)
		}
		return true, s.rewrite(path, append(records, rec))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return false, noFollowError(path, err)
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err == nil, err
}

// makeDir makes Dir 0700, or tightens the mode of one that exists.
func (s *FileStore) makeDir() error {
	if err := os.Mkdir(s.Dir, 0o700); err == nil || !errors.Is(err, os.ErrExist) {
		return err
	}
	info, err := os.Lstat(s.Dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s: not a directory: the progress records need a directory of their own", s.Dir)
	}
	if info.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(s.Dir, 0o700); err != nil {
			return fmt.Errorf("%s is open to other users (mode %v) and cannot be made private: %w", s.Dir, info.Mode().Perm(), err)
		}
		if s.Log != nil {
			s.Log("%s was mode %v; made it 0700: the progress records carry failure journals", s.Dir, info.Mode().Perm())
		}
	}
	return nil
}

// rewrite replaces the file at path with records, atomically: a crash leaves the old file or
// the new one, and a link at path is replaced, not followed.
func (s *FileStore) rewrite(path string, records []Record) error {
	var buf bytes.Buffer
	for _, r := range records {
		line, err := marshalRecord(r)
		if err != nil {
			return err
		}
		buf.Write(append(line, '\n'))
	}
	f, err := os.CreateTemp(s.Dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// readNoFollow reads a FileStore's file and its size, refusing a symbolic link.
func readNoFollow(path string) ([]Record, int64, error) {
	if oNoFollow == 0 {
		if info, err := os.Lstat(path); err == nil && info.Mode()&os.ModeSymlink != 0 {
			return nil, 0, fmt.Errorf("%s %w", path, ErrLink)
		}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, 0, noFollowError(path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !info.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: not a regular file", path)
	}
	records, err := readRecords(io.LimitReader(f, int64(MaxFileSize)))
	return records, info.Size(), err
}

// noFollowError names a link that an open with oNoFollow refused.
func noFollowError(path string, err error) error {
	if info, lerr := os.Lstat(path); lerr == nil && info.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", path, ErrLink)
	}
	return err
}

// marshalRecord is rec on one line, with <, > and & as they are.
func marshalRecord(rec Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Records implements Store.
func (s *FileStore) Records(node string) ([]Record, error) {
	records, _, err := readNoFollow(FilePath(s.Dir, node))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return records, err
}

// ReadFile reads a node's records as a FileStore writes them. A line that is not a record
// (the cut last line of a crash) is skipped; a file over MaxFileSize is read to there.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRecords(io.LimitReader(f, int64(MaxFileSize)))
}

func readRecords(r io.Reader) ([]Record, error) {
	var records []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxFileSize)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		var rec Record
		if len(line) == 0 || json.Unmarshal(line, &rec) != nil {
			continue
		}
		if _, err := ParsePhase(string(rec.Phase)); err != nil {
			continue
		}
		records = append(records, rec)
	}
	if err := sc.Err(); err != nil {
		return records, fmt.Errorf("reading progress records: %w", err)
	}
	return records, nil
}

// DirName is the directory of a nodes directory where a server keeps its nodes' records in a
// FileStore; a name starting with a dot is never taken for a node.
const DirName = ".progress"
