package serve

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// nodeISO is one of a node's ISOs, full or minimal. One served from the node's grown ISO
// (rebuilt with an Ignition area its payload fits, what `build --grow-embed-area` writes)
// reads a file the node owns: made on first request, shared by the requests that wait for
// it, and closed once the node is replaced (its files or the ISO changed, or the server
// closes) and no request reads it.
type nodeISO struct {
	artifact *artifact
	grown    *sourceFile // nil when served over the pristine ISO or the shared minimal ISO
}

// nodeISO returns the node's ISO, minimal over rootfsURL unless that is "", as node.Media
// makes it for `build`: made once however many requests ask for it at the same time.
func (s *Server) nodeISO(reqCtx context.Context, ns *nodeState, rootfsURL string) (*artifact, error) {
	f := ns.isos.join(rootfsURL, s.track, func() (nodeISO, error) {
		return s.makeNodeISO(ns, rootfsURL)
	}, func(m nodeISO, err error) {
		if err == nil && ns.retired && m.grown != nil {
			m.grown.retire()
		}
	})
	m, err := f.wait(reqCtx)
	return m.artifact, err
}

// makeNodeISO runs node.Media over the ISO, or over the minimal ISO every node shares.
func (s *Server) makeNodeISO(ns *nodeState, rootfsURL string) (nodeISO, error) {
	opts := node.MediaOptions{GrowEmbedArea: s.cfg.GrowEmbedArea, TempDir: s.cfg.TempDir}
	file, kind := ns.iso.file, "full"
	n := ns.node
	if rootfsURL != "" {
		shared := rootfsURL
		if ns.node.Output.RootfsURL == "" {
			// The node's own rootfs URL (minimalISO) is a kernel argument edit over the minimal
			// ISO every node shares, made for the public one.
			shared = s.cfg.BaseURL + "/" + isobuilder.PXERootfs
		}
		base, err := ns.iso.minimalBase(s.ctx, shared, s.cfg.TempDir)
		if err != nil {
			return nodeISO{}, err
		}
		if shared != rootfsURL && base.derived.Kargs() != nil {
			n = withRootfsURL(ns.node, shared, rootfsURL)
		}
		opts.Minimal, opts.MinimalOptions, opts.MinimalBase = true, isobuilder.MinimalOptions{RootfsURL: shared}, base.derived.LiveISO
		file, kind = base.file, "minimal"
	}
	m, err := n.Media(s.ctx, ns.iso.iso, opts)
	if err != nil {
		return nodeISO{}, fmt.Errorf("node %s: %w", ns.name, err)
	}
	var grown *sourceFile
	if m.Grown != nil {
		// Nothing else needs its name: unlinked, it cannot outlive a crash.
		m.Derived.Unname()
		id := fmt.Sprintf("%s grown %d %s", ns.iso.file.id, m.Grown.Compressed, rootfsURL)
		if grown, err = newSourceFile(m.Derived.Base(), id); err != nil {
			m.Derived.Close()
			return nodeISO{}, fmt.Errorf("node %s: %w", ns.name, err)
		}
		grown.owner = m.Derived
		file, kind = grown, "grown "+kind
		s.log.Printf("node %s: %v: serving it from the ISO rebuilt with a %d-byte Ignition area",
			ns.name, m.Grown, m.Derived.IgnitionArea().Length)
		s.metrics.made("grown")
	} else if rootfsURL != "" {
		s.metrics.made("minimal")
	}
	for _, w := range m.Warnings {
		s.log.Printf("node %s: warning: %s", ns.name, w)
	}
	return nodeISO{artifact: composedArtifact(file, m.Composed(), isoType, ns.modTime, kind, rootfsURL), grown: grown}, nil
}

// withRootfsURL is n with its live kernel arguments fetching the root file system from own
// instead of shared. The minimal ISO made for shared ends its arguments with shared's: own's
// comes at that place, before the node's own, as in the minimal ISO made for own.
func withRootfsURL(n *node.Node, shared, own string) *node.Node {
	edited := *n
	edited.LiveKargs.Delete = append(slices.Clip(n.LiveKargs.Delete), isobuilder.RootfsURLArg(shared))
	edited.LiveKargs.Append = append([]string{isobuilder.RootfsURLArg(own)}, n.LiveKargs.Append...)
	return &edited
}

// minimalISO is the node's minimal ISO, fetching its rootfs from the node's rootfs URL or else
// from this server, under the node's own capability path: clients without a token, tying up
// the public /rootfs.img, cannot keep the node's live system from its root file system. An
// ISO without kernel-argument areas keeps the public one (makeNodeISO).
func (s *Server) minimalISO(r *http.Request, ns *nodeState) (*artifact, error) {
	url := ns.node.Output.RootfsURL
	if url == "" {
		if s.cfg.BaseURL == "" {
			return nil, &statusError{status: http.StatusInternalServerError, err: fmt.Errorf("node %s: a minimal ISO needs the URL "+
				"its live system fetches the root file system from, and the server does not know its own: give the server its "+
				"base URL as the node reaches it, or set output.rootfsURL in the node's sno.yaml", ns.name)}
		}
		url = s.cfg.BaseURL + s.nodePrefix(ns.name) + "/" + isobuilder.PXERootfs
	}
	return s.nodeISO(r.Context(), ns, url)
}

// fitsISO is why the node's payload cannot customize the pristine ISO, nil when it can: what
// the index says of /<node>.iso without building anything.
func (ns *nodeState) fitsISO() error {
	ns.fitOnce.Do(func() {
		if _, err := ns.node.Image(ns.iso.iso); err != nil {
			ns.fitErr = fmt.Errorf("node %s: %w", ns.name, err)
		}
	})
	return ns.fitErr
}

// initramfs is the node's PXE initramfs as node composes it for `pxe build`: the ISO's live
// initramfs, inspected once per ISO, followed by the node's payload.
func (ns *nodeState) initramfs() (*artifact, error) {
	ns.initrdOnce.Do(func() {
		stock, err := ns.iso.stockInitramfs()
		var c *node.Composed
		if err == nil {
			if c, err = ns.node.Initramfs(stock); err != nil {
				err = fmt.Errorf("%s/INITRD.IMG of %s: %w", isobuilder.PXEDir, ns.iso.path, err)
			}
		}
		if err != nil {
			ns.initrdErr = fmt.Errorf("node %s: %w", ns.name, err)
			return
		}
		ns.initrd = composedArtifact(ns.iso.file, c, binaryType, ns.modTime, "initramfs")
	})
	return ns.initrd, ns.initrdErr
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

// retire closes the node's grown ISOs once no request reads them; one still being made is
// retired when it is done.
func (ns *nodeState) retire() {
	ns.isos.mu.Lock()
	defer ns.isos.mu.Unlock()
	ns.retired = true
	ns.isos.landedLocked(func(m nodeISO) {
		if m.grown != nil {
			m.grown.retire()
		}
	})
}
