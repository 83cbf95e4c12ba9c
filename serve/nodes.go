package serve

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/filestamp"
	"github.com/sno-iso/sno-iso/node"
)

// listing is the nodes directory as last read: re-read when the directory changes, which
// adding, removing or renaming a node does.
type listing struct {
	stamp   filestamp.Stamp
	nodes   []string // sorted
	skipped []string // entries that are not served, with the reason
	err     error
}

func readListing(dir string) *listing {
	l := &listing{stamp: filestamp.Of(dir)}
	l.nodes, l.skipped, l.err = capability.ListNodes(dir)
	return l
}

func (l *listing) has(name string) bool {
	_, ok := slices.BinarySearch(l.nodes, name)
	return ok
}

// nodeEntry holds the latest preparation of one node, and the one in progress: concurrent
// requests for a changed node wait for one preparation instead of each running their own.
type nodeEntry struct {
	mu        sync.Mutex
	cur       atomic.Pointer[nodeState]
	preparing *preparation // guarded by mu; nil when none is in progress
}

// preparation is a node's preparation in progress, with its time limit.
type preparation struct {
	done     chan struct{} // closed when ns is set
	ns       *nodeState
	deadline context.Context // ends at the time limit
	cancel   context.CancelFunc
	timedOut sync.Once // logs the overrun once
}

// nodeState is a node prepared against one version of the ISO and of its files. Its
// artifacts are made on first request.
type nodeState struct {
	name    string
	dir     string
	version string // the directory the files were read from (see nodeVersion)
	iso     *isoState
	stamps  map[string]filestamp.Stamp // by input path
	// modTime is the ISO's: the same on every replica, whenever each saw the node's files.
	modTime time.Time
	node    *node.Node
	err     error // the node's files are broken

	isos    flights[nodeISO] // by rootfs URL, "" for the full ISO
	retired bool             // replaced: grown ISOs are closed once unused; guarded by isos.mu

	fitOnce sync.Once
	fitErr  error

	initrdOnce sync.Once
	initrd     *artifact
	initrdErr  error
}

// fresh reports whether the node was prepared against this ISO and its inputs are unchanged.
func (ns *nodeState) fresh(iso *isoState) bool {
	if ns.iso != iso || nodeVersion(ns.dir) != ns.version {
		return false
	}
	for path, st := range ns.stamps {
		if !filestamp.Of(path).Same(st) {
			return false
		}
	}
	return true
}

// prepareNode runs the command's preparation for the node in dir, and remembers what it
// read. It reads the one version of the files that nodeVersion names, again if that changed
// while it read: an update of a Kubernetes volume mid-read is never half-read.
func prepareNode(name, dir string, iso *isoState, prepare prepareFunc) *nodeState {
	var ns *nodeState
	for range maxVersionReads {
		version := nodeVersion(dir)
		n, inputs, err := prepare(version)
		ns = &nodeState{name: name, dir: dir, version: version, iso: iso, node: n, err: err, stamps: map[string]filestamp.Stamp{}, modTime: iso.modTime}
		if err == nil && n == nil {
			ns.err = fmt.Errorf("%s: the preparation returned no node", dir)
		}
		// The directory itself changes when a file is added or renamed in it; a file the
		// preparation looks for only if present is noticed that way.
		for _, p := range append([]string{dir}, inputs...) {
			ns.stamps[p] = filestamp.Of(p)
		}
		if nodeVersion(dir) == version {
			break
		}
	}
	return ns
}
