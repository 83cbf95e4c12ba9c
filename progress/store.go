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

// ErrFull is an Add refused because the node's file reached MaxFileSize.
var ErrFull = errors.New("the node's progress file is full")

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
// with one write each: a crash leaves at most a cut last line, which reading skips. A file
// stops growing at MaxFileSize.
type FileStore struct {
	Dir string

	mu sync.Mutex
}

// FilePath is where a FileStore over dir keeps node's records.
func FilePath(dir, node string) string {
	return filepath.Join(dir, node+".jsonl")
}

// Add implements Store.
func (s *FileStore) Add(node string, rec Record) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	records, err := ReadFile(FilePath(s.Dir, node))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	failures := 0
	for _, r := range records {
		if same(r.Report, rec.Report) {
			return false, nil
		}
		if r.Phase == Failed {
			failures++
		}
	}
	if rec.Phase == Failed && failures >= 2*maxFailures {
		return false, ErrFull
	}
	line, err := marshalRecord(rec)
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return false, err
	}
	f, err := os.OpenFile(FilePath(s.Dir, node), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return false, err
	}
	info, err := f.Stat()
	if err == nil && info.Size()+int64(len(line))+1 > int64(MaxFileSize) {
		err = ErrFull
	}
	if err == nil {
		_, err = f.Write(append(line, '\n'))
	}
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err == nil, err
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
	records, err := ReadFile(FilePath(s.Dir, node))
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
