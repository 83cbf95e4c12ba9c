package serve

import (
	"context"
	"fmt"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// What every node shares of one version of the ISO: its PXE files, its stock initramfs and
// its minimal ISOs, each found or made once.

// minimalBase is the minimal ISO made from the base ISO for one rootfs URL, shared by
// every node; each node's minimal ISO is its patches over it.
type minimalBase struct {
	derived *isobuilder.DerivedISO
	file    *sourceFile
}

// loadPXE finds the PXE files once; the kernel and rootfs are served as they are.
func (s *isoState) loadPXE() error {
	s.pxeOnce.Do(func() {
		files, err := node.PXEFiles(s.iso)
		if err != nil {
			s.pxeErr = fmt.Errorf("%s: %w", s.path, err)
			return
		}
		s.pxeArtifacts = map[string]*artifact{}
		for n, f := range files {
			b := newArtifact(s.file, binaryType, s.modTime, "pxe", n)
			b.addFile(f.Offset(), int64(f.Length))
			s.pxeArtifacts[n] = b.done()
		}
	})
	return s.pxeErr
}

// pxeArtifact serves the PXE file called name (vmlinuz, rootfs.img) as it is.
func (s *isoState) pxeArtifact(name string) (*artifact, error) {
	if err := s.loadPXE(); err != nil {
		return nil, err
	}
	return s.pxeArtifacts[name], nil
}

// stockInitramfs is the ISO's live initramfs, inspected once per ISO whatever the number of
// nodes.
func (s *isoState) stockInitramfs() (*node.StockInitramfs, error) {
	s.initramfsOnce.Do(func() {
		if err := s.loadPXE(); err != nil {
			s.initramfsErr = err
			return
		}
		if s.initramfs, s.initramfsErr = node.InspectInitramfs(s.iso); s.initramfsErr != nil {
			s.initramfsErr = fmt.Errorf("%s/INITRD.IMG of %s: %w", isobuilder.PXEDir, s.path, s.initramfsErr)
		}
	})
	return s.initramfs, s.initramfsErr
}

// minimalBase returns the minimal ISO for rootfsURL, made on first use under ctx (the
// server's).
func (s *isoState) minimalBase(ctx context.Context, rootfsURL, dir string) (*minimalBase, error) {
	return s.minimal.join(rootfsURL, nil, func() (*minimalBase, error) {
		derived, err := node.MinimalISO(ctx, s.iso, dir, isobuilder.MinimalOptions{RootfsURL: rootfsURL})
		if err != nil {
			return nil, fmt.Errorf("making the minimal ISO of %s: %w", s.path, err)
		}
		// Nothing else needs its name: unlinked, it cannot outlive a crash.
		derived.Unname()
		file, err := newSourceFile(derived.Base(), s.file.id+" minimal "+rootfsURL)
		if err != nil {
			derived.Close()
			return nil, err
		}
		return &minimalBase{derived: derived, file: file}, nil
	}, nil).wait(ctx)
}
