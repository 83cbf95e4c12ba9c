package serve

import (
	"slices"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/filestamp"
)

// listing is the nodes directory as last read: re-read when the directory changes, which
// adding, removing or renaming a node does.
type listing struct {
	stamp   filestamp.Stamp
	nodes   []string // sorted
	skipped []string // entries that are not served, with the reason
	err     error
	// nameRuns are the nodes' token-like runs, which the access log shows (loggedURI).
	nameRuns map[string]bool
}

func readListing(dir string) *listing {
	l := &listing{stamp: filestamp.Of(dir)}
	l.nodes, l.skipped, l.err = capability.ListNodes(dir)
	l.nameRuns = nameRunsOf(l.nodes)
	return l
}

func (l *listing) has(name string) bool {
	_, ok := slices.BinarySearch(l.nodes, name)
	return ok
}

// listed reports whether name is a node of the nodes directory, re-reading the directory
// when it changed.
func (s *Server) listed(name string) bool {
	return capability.ValidNodeName(name) && s.listing().has(name)
}

func (s *Server) listing() *listing {
	st := filestamp.Of(s.cfg.NodesDir)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.list == nil || !st.Same(s.list.stamp) {
		s.list = readListing(s.cfg.NodesDir)
		s.nodes.retain(s.list.has)
	}
	return s.list
}

func (s *Server) unknownNode(name string) error {
	return notFound("no node %q: the nodes are the subdirectories of the nodes directory (see / for the list)", name)
}
