package node

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sno-iso/sno-iso/isobuilder"
)

// Write writes the node's ISO to out: a minimal or grown ISO is its temporary file renamed
// into place (or streamed), an ISO over the input is written or patched in place. A new file
// is SecretPerm: the media carry the node's config. An ISO over the caller's
// MediaOptions.MinimalBase is a new file or a stream, never written in place.
func (m *Media) Write(ctx context.Context, out isobuilder.Output) error {
	switch {
	case m.Derived != nil:
		return out.WriteDerived(ctx, m.Derived, m.Image)
	case m.overMinimalBase && out.InPlace != "":
		return isobuilder.ErrDerivedInPlace
	}
	return out.Write(ctx, m.Image)
}

// DirOptions say how WriteDir writes a PXE directory.
type DirOptions struct {
	// Force replaces existing files in the directory.
	Force bool
	// Keep names the work's inputs: no file of the directory may be one of them.
	Keep []string
	// Progress, when set, is asked for the progress of copying the file called name of size
	// bytes (the kernel and the rootfs); done is called once it is copied.
	Progress func(name string, size int64) (p isobuilder.Progress, done func())
}

// WriteDir writes the PXE directory dir, created if needed, all files or none: each is
// started before any is written, so an existing one is refused at once (without
// opts.Force), and they appear together when all are complete. Files that carry the node's
// config (the initramfs) or may name a capability URL (the boot configurations) are
// SecretPerm whatever the umask; the kernel and rootfs, copied from the ISO, are PublicPerm.
// Nothing is written through a symbolic link inside dir. An ISO whose PXE files cannot be
// copied or customized gives an *ISOError naming the ISO's file.
func (s *PXESet) WriteDir(ctx context.Context, dir string, opts DirOptions) error {
	names := s.Names()
	stage, err := isobuilder.NewStageIn(dir, opts.Force)
	if err != nil {
		return err
	}
	defer stage.Abort()
	stage.Keep(opts.Keep...)
	files := map[string]*os.File{}
	for _, name := range names {
		dest := filepath.Join(dir, name)
		if err := stage.MkdirAll(filepath.Dir(dest)); err != nil {
			return err
		}
		f, err := stage.Create(dest, pxeFilePerm(name))
		if err != nil {
			return err
		}
		files[name] = f
	}
	// The initramfs first: customizing it checks the ISO's before the large files are copied.
	order := append([]string{isobuilder.PXEInitramfs}, slices.DeleteFunc(slices.Clone(names), func(name string) bool {
		return name == isobuilder.PXEInitramfs
	})...)
	for _, name := range order {
		if err := s.writeDirFile(ctx, name, files[name], opts); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return stage.Commit()
}

func (s *PXESet) writeDirFile(ctx context.Context, name string, f *os.File, opts DirOptions) error {
	var progress isobuilder.Progress
	if opts.Progress != nil && (name == isobuilder.PXEKernel || name == isobuilder.PXERootfs) {
		p, done := opts.Progress(name, s.Size(name))
		defer done()
		progress = p
	}
	err := s.Write(ctx, name, f, progress)
	var isoErr *ISOError
	if errors.As(err, &isoErr) {
		isoErr.File = isobuilder.PXEDir + "/" + strings.ToUpper(name)
	}
	return err
}

// pxeFilePerm is the mode of a file of a node's PXE directory: the initramfs carries the
// node's config, and the boot configurations name the base URL, which may be a capability URL
// of sno-iso serve; only the kernel and rootfs, copied from the ISO, are no secret.
func pxeFilePerm(name string) fs.FileMode {
	if name == isobuilder.PXEKernel || name == isobuilder.PXERootfs {
		return isobuilder.PublicPerm
	}
	return isobuilder.SecretPerm
}
