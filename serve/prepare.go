package serve

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/sno-iso/sno-iso/internal/filestamp"
	"github.com/sno-iso/sno-iso/node"
	"github.com/sno-iso/sno-iso/nodedir"
)

// preparation is a node's preparation in progress, with its time limit.
type preparation struct {
	done     chan struct{} // closed when ns is set
	ns       *nodeState
	deadline context.Context // ends at the time limit
	cancel   context.CancelFunc
	timedOut sync.Once // logs the overrun once
}

// stuck reports whether the preparation is still running past its time limit.
func (p *preparation) stuck() bool {
	select {
	case <-p.done:
		return false
	default:
		return p.deadline.Err() != nil
	}
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

// nodeStateOverhead is what a preparation costs besides its payload: its maps, stamps and
// the artifacts' descriptions.
const nodeStateOverhead = 16 << 10

// memory estimates the bytes a preparation holds: its payload, and as much again for the
// compressed copies its media are made of.
func (ns *nodeState) memory() int64 {
	n := int64(nodeStateOverhead)
	if ns.node != nil {
		for _, data := range ns.node.Payload {
			n += 2 * int64(len(data))
		}
	}
	return n
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
		ns = &nodeState{name: name, dir: dir, version: version, iso: iso, node: n, err: err,
			stamps: map[string]filestamp.Stamp{}, modTime: iso.modTime}
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

// prepareFunc prepares the node whose files are in dir. inputs are the files it read or
// looked for, also when it fails: a change to any of them (or to dir) prepares the node
// again, so a fixed file is picked up without a restart.
type prepareFunc func(dir string) (n *node.Node, inputs []string, err error)

// prepareDir prepares a node directory as nodedir.Inputs lays it out: exactly what `sno-iso
// build` and `sno-iso pxe build` make of the same files.
func prepareDir(dir string) (*node.Node, []string, error) {
	return node.Load(nodedir.Inputs(dir))
}

// node returns the node's preparation against iso, preparing it again when its files
// changed; a node whose files are broken is an error naming the problem, and one whose
// preparation takes longer than Config.PrepareTimeout a 503.
func (s *Server) node(ctx context.Context, iso *isoState, name string) (*nodeState, error) {
	if !s.listed(name) {
		return nil, s.unknownNode(name)
	}
	e := s.nodes.entry(name)
	ns := e.cur.Load()
	hit := ns != nil && ns.fresh(iso)
	if !hit {
		var err error
		if ns, err = s.prepared(ctx, e, iso, name); err != nil {
			return nil, err
		}
	}
	s.nodes.use(e, ns, hit)
	if ns.err != nil {
		return nil, fmt.Errorf("node %s: %w", name, ns.err)
	}
	return ns, nil
}

// prepared waits for the node's preparation against iso, starting it when none is in
// progress: one at a time per node, whatever the number of requests waiting for it. It runs
// apart from the requests, so that one that never ends (a file system that does not answer)
// holds up nothing but this node's requests, each for at most the time limit.
func (s *Server) prepared(ctx context.Context, e *nodeEntry, iso *isoState, name string) (*nodeState, error) {
	for {
		ns, err := s.joinPreparation(ctx, e, iso, name)
		// A preparation started against an ISO since replaced serves nobody who holds the new
		// one (its ISO may be closed by now): prepare again against ours.
		if err != nil || ns.iso == iso {
			return ns, err
		}
	}
}

// joinPreparation waits for the node's preparation in progress, or starts one against iso.
func (s *Server) joinPreparation(ctx context.Context, e *nodeEntry, iso *isoState, name string) (*nodeState, error) {
	e.mu.Lock()
	if ns := e.cur.Load(); ns != nil && ns.fresh(iso) {
		e.mu.Unlock()
		return ns, nil
	}
	p := e.preparing
	// One stuck past its time limit (a read that never returns) is left behind: its file
	// may have been put right since. A new one starts at most once per time limit.
	if p == nil || p.stuck() {
		p = &preparation{done: make(chan struct{})}
		p.deadline, p.cancel = context.WithTimeout(s.ctx, s.cfg.PrepareTimeout)
		e.preparing = p
		go func() {
			defer p.cancel()
			ns := prepareNode(name, filepath.Join(s.cfg.NodesDir, name), iso, s.prepare)
			if s.nodes.putFrom(e, p, ns) {
				s.logPrepared(ns)
			}
			p.ns = ns
			close(p.done)
		}()
	}
	e.mu.Unlock()
	select {
	case <-p.done:
		return p.ns, nil
	case <-p.deadline.Done():
		select {
		case <-p.done: // it ended with its deadline
			return p.ns, nil
		default:
		}
		err := fmt.Errorf("node %s: its preparation has taken more than %v: are its files on a file system that does not answer?",
			name, s.cfg.PrepareTimeout)
		p.timedOut.Do(func() { s.log.Printf("%v", err) })
		return nil, &statusError{status: http.StatusServiceUnavailable, err: err, retryAfter: 30,
			public: "this node's files are still being read, for longer than they should take; retry later"}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Server) logPrepared(ns *nodeState) {
	s.metrics.prepared(ns.err)
	if ns.err != nil {
		s.log.Printf("node %s: cannot be served: %v", ns.name, ns.err)
		return
	}
	for _, w := range ns.node.Warnings {
		s.log.Printf("node %s: warning: %s", ns.name, w)
	}
}
