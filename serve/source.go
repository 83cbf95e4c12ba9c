package serve

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/filestamp"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
	"github.com/sno-iso/sno-iso/origin"
)

// isoState is one version of the base ISO, parsed once. Requests hold a reference while
// they use it; when the file at the ISO path changes, a new isoState replaces it, and the
// old one is closed once its last request is done.
type isoState struct {
	path  string
	stamp filestamp.Stamp // of a local file; zero for an origin
	// modTime is every artifact's Last-Modified: from the content, never from a clock.
	modTime time.Time
	iso     *isobuilder.LiveISO
	file    *sourceFile
	object  *origin.Object // nil for a local file

	refs    int  // guarded by Server.mu
	retired bool // guarded by Server.mu

	pxeOnce      sync.Once
	pxe          map[string]isobuilder.PXEFile
	pxeArtifacts map[string]*artifact
	pxeErr       error

	initramfsOnce sync.Once
	// initramfsErr says the stock initramfs cannot be customized at all.
	initramfsErr      error
	initramfsFeatures embed.Features

	minimal flights[*minimalBase] // by rootfs URL
}

// minimalBase is the minimal ISO made from the base ISO for one rootfs URL, shared by
// every node; each node's minimal ISO is its patches over it.
type minimalBase struct {
	derived *isobuilder.DerivedISO
	file    *sourceFile
}

// openISO opens and parses the ISO at path, or at an http(s) URL through its origin. It must
// be pristine, as for build: every node's media are its customization of the stock ISO.
func openISO(path string, opts origin.Options) (*isoState, error) {
	open := openFileISO
	if isURL(path) {
		open = openOriginISO
	}
	s, err := open(path, opts)
	if err != nil {
		return nil, err
	}
	if err := s.iso.CheckPristine(); err != nil {
		s.close()
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return s, nil
}

func openFileISO(path string, _ origin.Options) (*isoState, error) {
	st := filestamp.Of(path)
	iso, err := isobuilder.Open(path)
	if err != nil {
		return nil, err
	}
	id, err := isoIdentity(iso, "")
	if err == nil {
		var file *sourceFile
		if file, err = newSourceFile(iso.Base(), id); err == nil {
			return &isoState{path: path, stamp: st, modTime: volumeTime(iso), iso: iso, file: file}, nil
		}
	}
	iso.Close()
	return nil, fmt.Errorf("%s: %w", path, err)
}

// close releases the ISO and removes the minimal ISOs made from it; only when no request
// uses it any more.
func (s *isoState) close() {
	for _, f := range s.minimal.all() {
		if m, err := f.wait(context.Background()); err == nil {
			m.derived.Close()
		}
	}
	s.iso.Close()
}

// loadPXE finds the PXE files once; the kernel and rootfs are served as they are.
func (s *isoState) loadPXE() error {
	s.pxeOnce.Do(func() {
		s.pxe = map[string]isobuilder.PXEFile{}
		s.pxeArtifacts = map[string]*artifact{}
		for _, n := range []string{isobuilder.PXEKernel, isobuilder.PXEInitramfs, isobuilder.PXERootfs} {
			f, err := s.iso.PXEFile(n)
			if err != nil {
				s.pxeErr = fmt.Errorf("%s: %w", s.path, err)
				return
			}
			s.pxe[n] = f
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

// checkInitramfs reports whether the stock initramfs can be customized with files, as
// isobuilder.CustomizeInitramfs (what `pxe build` runs) would decide. The stock initramfs
// is inspected once per ISO, whatever the number of nodes.
func (s *isoState) checkInitramfs(files initrd.Files) error {
	s.initramfsOnce.Do(func() {
		if err := s.loadPXE(); err != nil {
			s.initramfsErr = err
			return
		}
		f := s.pxe[isobuilder.PXEInitramfs]
		s.initramfsFeatures, s.initramfsErr = isobuilder.InspectInitramfs(s.iso.PXEFileReader(f))
		if s.initramfsErr != nil {
			s.initramfsErr = fmt.Errorf("%s/INITRD.IMG of %s: %w", isobuilder.PXEDir, s.path, s.initramfsErr)
		}
	})
	if s.initramfsErr != nil {
		return s.initramfsErr
	}
	if err := isobuilder.CheckInitramfsPayload(s.initramfsFeatures, files); err != nil {
		return fmt.Errorf("%s/INITRD.IMG of %s: %w", isobuilder.PXEDir, s.path, err)
	}
	return nil
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
