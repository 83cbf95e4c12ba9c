package serve

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// grownISO is a node's ISO rebuilt with an Ignition area that its payload fits, customized:
// what `build --grow-embed-area` writes. One node owns it; it is made on first request,
// shared by the requests that wait for it, and closed once the node is replaced (its files
// or the ISO changed, or the server closes) and no request reads it.
type grownISO struct {
	artifact *artifact
	file     *sourceFile
}

// grownIfNeeded answers for a node whose payload does not fit the ISO's Ignition area (err
// is an *isobuilder.TooLargeError) with its grown ISO, when the server grows embed areas.
// rootfsURL is the minimal ISO's, or "" for the full ISO.
func (s *Server) grownIfNeeded(r *http.Request, ns *nodeState, a *artifact, err error, rootfsURL string) (*artifact, error) {
	var tooLarge *isobuilder.TooLargeError
	if !s.cfg.GrowEmbedArea || !errors.As(err, &tooLarge) {
		return a, err
	}
	f := ns.grown.join(rootfsURL, s.track, func() (grownISO, error) {
		a, file, err := s.makeGrown(ns, tooLarge, rootfsURL)
		return grownISO{a, file}, err
	}, func(g grownISO, err error) {
		if err == nil && ns.retired {
			g.file.retire()
		}
	})
	g, err := f.wait(r.Context())
	return g.artifact, err
}

// makeGrown rebuilds the ISO as node.GrownISO decides and customizes it for the node.
func (s *Server) makeGrown(ns *nodeState, tooLarge *isobuilder.TooLargeError, rootfsURL string) (*artifact, *sourceFile, error) {
	opts := node.MediaOptions{Minimal: rootfsURL != "", MinimalOptions: isobuilder.MinimalOptions{RootfsURL: rootfsURL}, TempDir: s.cfg.TempDir}
	derived, err := node.GrownISO(s.ctx, ns.iso.iso, tooLarge, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("node %s: %w", ns.name, err)
	}
	// Nothing else needs its name: unlinked, it cannot outlive a crash.
	derived.Unname()
	img, err := ns.node.Image(derived.LiveISO)
	var file *sourceFile
	if err == nil {
		file, err = newSourceFile(derived.Base(), fmt.Sprintf("%s grown %d %s", ns.iso.file.id, tooLarge.Compressed, rootfsURL))
	}
	if err != nil {
		derived.Close()
		return nil, nil, fmt.Errorf("node %s: %w", ns.name, err)
	}
	file.owner = derived
	s.log.Printf("node %s: %v: serving it from the ISO rebuilt with a %d-byte Ignition area", ns.name, tooLarge, derived.IgnitionArea().Length)
	if opts.Minimal {
		for _, w := range ns.node.MinimalWarnings(derived.LiveISO) {
			s.log.Printf("node %s: warning: %s", ns.name, w)
		}
	}
	kind := "grown"
	if opts.Minimal {
		kind = "grown minimal"
	}
	s.metrics.made("grown")
	return imageArtifact(file, img, ns.modTime, kind, rootfsURL), file, nil
}

// retire closes the node's grown ISOs once no request reads them; one still being made is
// retired when it is done.
func (ns *nodeState) retire() {
	ns.grown.mu.Lock()
	defer ns.grown.mu.Unlock()
	ns.retired = true
	ns.grown.landedLocked(func(g grownISO) { g.file.retire() })
}
