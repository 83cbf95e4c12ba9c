package serve

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/filestamp"
	"github.com/sno-iso/sno-iso/isobuilder"
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

	fullOnce sync.Once
	full     *artifact
	fullErr  error

	initrdOnce sync.Once
	initrd     *artifact
	initrdErr  error

	minimal flights[*artifact] // by rootfs URL

	grown   flights[grownISO] // by rootfs URL, "" for the full ISO
	retired bool              // replaced: grown ISOs are closed once unused; guarded by grown.mu
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

// fullISO is the node's customized ISO.
func (ns *nodeState) fullISO() (*artifact, error) {
	ns.fullOnce.Do(func() {
		img, err := ns.node.Image(ns.iso.iso)
		if err != nil {
			ns.fullErr = fmt.Errorf("node %s: %w", ns.name, err)
			return
		}
		ns.full = imageArtifact(ns.iso.file, img, ns.modTime, "full")
	})
	return ns.full, ns.fullErr
}

// initramfs is the ISO's live initramfs followed by the node's payload as its own xz newc
// archive, what `pxe build` writes as initrd.img.
func (ns *nodeState) initramfs() (*artifact, error) {
	ns.initrdOnce.Do(func() {
		if err := ns.iso.checkInitramfs(ns.node.Payload); err != nil {
			ns.initrdErr = fmt.Errorf("node %s: %w", ns.name, err)
			return
		}
		packed, err := initrd.Pack(ns.node.Payload)
		if err != nil {
			ns.initrdErr = fmt.Errorf("node %s: %w", ns.name, err)
			return
		}
		stock := ns.iso.pxe[isobuilder.PXEInitramfs]
		b := newArtifact(ns.iso.file, binaryType, ns.modTime, "initramfs")
		b.addFile(stock.Offset(), int64(stock.Length))
		b.addData(packed)
		ns.initrd = b.done()
	})
	return ns.initrd, ns.initrdErr
}

// minimalISO is the node's customization over the minimal ISO that fetches its rootfs from
// rootfsURL, made once however many requests ask for it at the same time.
func (s *Server) nodeMinimalISO(reqCtx context.Context, ns *nodeState, rootfsURL string) (*artifact, error) {
	return ns.minimal.join(rootfsURL, s.track, func() (*artifact, error) {
		base, err := ns.iso.minimalBase(s.ctx, rootfsURL, s.cfg.TempDir)
		if err != nil {
			return nil, err
		}
		img, err := ns.node.Image(base.derived.LiveISO)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", ns.name, err)
		}
		for _, w := range ns.node.MinimalWarnings(base.derived.LiveISO) {
			s.log.Printf("node %s: warning: %s", ns.name, w)
		}
		s.metrics.made("minimal")
		return imageArtifact(base.file, img, ns.modTime, "minimal", rootfsURL), nil
	}, nil).wait(reqCtx)
}

// bootIPXE renders the node's iPXE script for files under baseURL.
func (ns *nodeState) bootIPXE(baseURL string) (*artifact, error) {
	script, err := ns.node.BootIPXE(ns.iso.iso, baseURL)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", ns.name, err)
	}
	b := newArtifact(nil, textType, ns.modTime, "ipxe")
	b.addData(script)
	return b.done(), nil
}
