package isobuilder

import (
	"context"
	"errors"
	"io"
)

// Output is where an edited ISO goes, the choice a command line makes with its arguments:
// the ISO file itself edited in place, a stream (standard output, a USB stick), or a new
// file. A new file is created SecretPerm whatever the umask: an ISO may carry an embedded
// config, which holds the cluster's private keys.
type Output struct {
	// InPlace, when set, is the ISO file the image was made from: only its patches are
	// written into it.
	InPlace string
	// Stream, when set, receives the whole image.
	Stream io.Writer
	// File, when set, is a new file, written beside itself and renamed into place.
	File string
	// Force replaces an existing File.
	Force bool
	// Keep names the work's inputs: File may not be one of them.
	Keep []string
	// Progress is told the bytes written to a Stream or File.
	Progress Progress
}

// ErrNoOutput is Output.Write's error when not exactly one destination is set.
var ErrNoOutput = errors.New("an Output names exactly one of InPlace, Stream and File")

// ErrDerivedInPlace is WriteDerived's error for an InPlace output: a minimal or rebuilt ISO
// is a new file.
var ErrDerivedInPlace = errors.New("a minimal or rebuilt ISO is a new file: it cannot be written in place")

func (o Output) check() error {
	n := 0
	for _, set := range []bool{o.InPlace != "", o.Stream != nil, o.File != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return ErrNoOutput
	}
	return nil
}

// Write writes img to o.
func (o Output) Write(ctx context.Context, img *Image) error {
	if err := o.check(); err != nil {
		return err
	}
	switch {
	case o.InPlace != "":
		return WriteInPlace(ctx, img, o.InPlace)
	case o.Stream != nil:
		return WriteStream(ctx, img, o.Stream, WriteOptions{Progress: o.Progress})
	}
	return WriteFile(ctx, img, o.File, WriteOptions{Force: o.Force, Keep: o.Keep, Progress: o.Progress, Perm: SecretPerm})
}

// WriteDerived writes img, made by d.Image, to o: a File is d's temporary file renamed into
// place (copied only when it is in another directory), a Stream gets the image's bytes. An
// image over a derived ISO has no ISO file to edit in place.
func (o Output) WriteDerived(ctx context.Context, d *DerivedISO, img *Image) error {
	return o.writeDerived(ctx, d, img, nil, "")
}

// WriteWithRootfs writes img, the minimal ISO d made of src, to o as WriteDerived does, and
// src's live root file system to the new file rootfs (PublicPerm: it is the stock one), which
// a minimal ISO's rootfs URL serves: both appear, or neither.
func (o Output) WriteWithRootfs(ctx context.Context, src *LiveISO, d *DerivedISO, img *Image, rootfs string) error {
	return o.writeDerived(ctx, d, img, src, rootfs)
}

func (o Output) writeDerived(ctx context.Context, d *DerivedISO, img *Image, src *LiveISO, rootfs string) error {
	if err := o.check(); err != nil {
		return err
	}
	if o.InPlace != "" {
		return ErrDerivedInPlace
	}
	stage := NewStage(o.Force)
	defer stage.Abort()
	stage.Keep(o.Keep...)
	if rootfs != "" {
		if err := src.WriteRootfs(ctx, stage, rootfs); err != nil {
			return err
		}
	}
	if o.Stream != nil {
		if err := WriteStream(ctx, img, o.Stream, WriteOptions{Progress: o.Progress}); err != nil {
			return err
		}
	} else if err := d.Stage(ctx, stage, img, o.File); err != nil {
		return err
	}
	if err := stage.Commit(); err != nil {
		return err
	}
	if o.File != "" && o.Progress != nil {
		o.Progress(img.Size())
	}
	return nil
}
