package isobuilder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
)

// PXEDir is the directory of a CoreOS live ISO that holds the kernel, initramfs and rootfs
// for network boots.
const PXEDir = "IMAGES/PXEBOOT"

// The network-boot files of PXEDir, by the names coreos-installer gives them; a node's PXE
// directory and the server publish them under the same names.
const (
	PXEKernel    = "vmlinuz"
	PXEInitramfs = "initrd.img"
	PXERootfs    = "rootfs.img"
)

// MaxInitramfsSize bounds the decompressed bytes read from a whole live initramfs: a real
// RHCOS initramfs unpacks to a few hundred MiB, and only a handful of small files are kept.
const MaxInitramfsSize = 4 << 30

// MaxInitramfsRatio bounds what an initramfs sno-iso reads may decompress to, as a multiple
// of its compressed size (initrd.ReadOptions.MaxRatio): real ones are 2 to 5 times larger
// decompressed, while a crafted 700 KB xz archive would otherwise cost minutes of CPU before
// MaxInitramfsSize ends it.
const MaxInitramfsRatio = 64

// maxFeaturesSize bounds the files InspectInitramfs keeps: its stamp and features.json.
const maxFeaturesSize = 1 << 20

// The files of a live initramfs that tell what it is.
const (
	// LiveInitramfsStamp exists in every CoreOS live initramfs.
	LiveInitramfsStamp = "etc/coreos-live-initramfs"
	// initramfsFeaturesPath is the initramfs copy of coreos/features.json.
	initramfsFeaturesPath = "etc/coreos/features.json"
)

var (
	// ErrNotLiveInitramfs means an initramfs lacks LiveInitramfsStamp.
	ErrNotLiveInitramfs = errors.New("not a CoreOS live initramfs image")
	// ErrInitramfsCustomized means an initramfs already carries an Ignition config or
	// network keyfiles.
	ErrInitramfsCustomized = errors.New("input is already customized")
	// ErrInitramfsNoNetwork means an initramfs would ignore network keyfiles: its
	// features.json lacks live-initrd-network.
	ErrInitramfsNoNetwork = errors.New("this live initramfs does not read network keyfiles")
)

// PXEFile is one plain file of PXEDir.
type PXEFile struct {
	// Name is the name coreos-installer gives the file: its primary name lowercased, without
	// ";1" and a trailing ".", e.g. "vmlinuz", "initrd.img".
	Name string
	Record
}

// PXEFiles lists the plain files of IMAGES/PXEBOOT in on-disc order; subdirectories are
// skipped. An ISO without the directory is not a CoreOS live ISO.
func (l *LiveISO) PXEFiles() ([]PXEFile, error) {
	dir, err := l.volume.Lookup(PXEDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no %s directory with the network-boot files", embed.ErrUnrecognizedISO, PXEDir)
	}
	if err != nil {
		return nil, err
	}
	if !dir.Dir {
		return nil, fmt.Errorf("%w: %s is a file, not a directory", embed.ErrUnrecognizedISO, PXEDir)
	}
	records, err := l.volume.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []PXEFile
	for _, rec := range records {
		if rec.Dir {
			continue
		}
		name := strings.ToLower(rec.Name)
		// A primary name never holds '/', but "." and ".." survive normalisation and would
		// leave the output directory.
		if name == "" || name == "." || name == ".." {
			return nil, fmt.Errorf("%s holds a file named %q; corrupt ISO?", PXEDir, rec.Name)
		}
		if end := rec.Offset() + int64(rec.Length); end > l.size {
			return nil, fmt.Errorf("%s/%s (LBA %d, %d bytes) ends at byte %d, past the end of the %d-byte ISO; truncated ISO?",
				PXEDir, rec.Name, rec.LBA, rec.Length, end, l.size)
		}
		files = append(files, PXEFile{Name: name, Record: rec})
	}
	return files, nil
}

// PXEFile returns the plain file of IMAGES/PXEBOOT called name ("initrd.img").
func (l *LiveISO) PXEFile(name string) (PXEFile, error) {
	files, err := l.PXEFiles()
	if err != nil {
		return PXEFile{}, err
	}
	for _, f := range files {
		if f.Name == name {
			return f, nil
		}
	}
	return PXEFile{}, fmt.Errorf("%w: no %s/%s", embed.ErrUnrecognizedISO, PXEDir, strings.ToUpper(name))
}

// PXEFileReader reads the bytes of f from the ISO.
func (l *LiveISO) PXEFileReader(f PXEFile) *io.SectionReader {
	return io.NewSectionReader(l.base, f.Offset(), int64(f.Length))
}

// CopyPXEFile writes the bytes of f to w, moved by the kernel when w is a file (see
// Image.WriteTo); progress, if not nil, is told the bytes written so far.
func (l *LiveISO) CopyPXEFile(ctx context.Context, w io.Writer, f PXEFile, progress Progress) error {
	sw := newSequentialWriter(ctx, w, l.base, progress, true)
	if err := sw.copyBase(f.Offset(), int64(f.Length)); err != nil {
		return fmt.Errorf("copying %s/%s: %w", PXEDir, f.Name, err)
	}
	sw.report()
	return nil
}

// ExtractPXE writes every PXE file to dir as prefix+name, as `coreos-installer iso extract
// pxe` does (prefix "rhcos-live-" gives "rhcos-live-vmlinuz"), through one Stage confined to
// dir (NewStageIn: no symbolic link in dir is followed). Files are created new: when any
// destination exists nothing is written and the error wraps fs.ErrExist. It returns the
// paths written.
func (l *LiveISO) ExtractPXE(ctx context.Context, dir, prefix string) ([]string, error) {
	files, err := l.PXEFiles()
	if err != nil {
		return nil, err
	}
	stage, err := NewStageIn(dir, false)
	if err != nil {
		return nil, err
	}
	defer stage.Abort()
	outs := make([]*os.File, len(files))
	dests := make([]string, len(files))
	for i, f := range files {
		dests[i] = filepath.Join(dir, prefix+f.Name)
		if outs[i], err = stage.Create(dests[i], PublicPerm); err != nil {
			return nil, extractError(err)
		}
	}
	for i, f := range files {
		if err := l.CopyPXEFile(ctx, outs[i], f, nil); err != nil {
			return nil, fmt.Errorf("writing %s: %w", dests[i], err)
		}
	}
	if err := stage.Commit(); err != nil {
		return nil, extractError(err)
	}
	return dests, nil
}

// extractError says what to do about a destination that exists: extraction never replaces
// a file.
func extractError(err error) error {
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w; remove it or extract to another directory", err)
	}
	return err
}

// CustomizeInitramfs writes the stock initramfs read from stock to w unchanged, then
// directly after its last byte the xz newc archive of files, as `coreos-installer pxe
// customize` does: the kernel unpacks concatenated archives and a later file wins. The
// stock initramfs must be a CoreOS live initramfs that is not customized yet, and network
// keyfiles need its live-initrd-network feature; otherwise the error wraps
// ErrNotLiveInitramfs or ErrInitramfsCustomized, and w has received a partial copy.
func CustomizeInitramfs(w io.Writer, stock io.Reader, files initrd.Files) error {
	features, err := InspectInitramfs(io.TeeReader(stock, w))
	if err != nil {
		return err
	}
	appendix, err := InitramfsAppendix(features, files)
	if err != nil {
		return err
	}
	_, err = w.Write(appendix)
	return err
}

// InitramfsAppendix is what follows a stock live initramfs with features to carry files: the
// xz newc archive of files, checked with CheckInitramfsPayload.
func InitramfsAppendix(features embed.Features, files initrd.Files) ([]byte, error) {
	if err := CheckInitramfsPayload(features, files); err != nil {
		return nil, err
	}
	return initrd.Pack(files)
}

// CheckInitramfsPayload says whether a live initramfs with features takes files: network
// keyfiles need live-initrd-network (else the error wraps ErrInitramfsNoNetwork).
func CheckInitramfsPayload(features embed.Features, files initrd.Files) error {
	for _, p := range files.Paths() {
		if initrd.IsNetworkFile(p) && !features.LiveInitrdNetwork {
			return fmt.Errorf("%w (%s lacks live-initrd-network); "+
				"use a newer RHCOS, or ip= kernel arguments", ErrInitramfsNoNetwork, initramfsFeaturesPath)
		}
	}
	return nil
}

// InspectInitramfs reads a whole initramfs, checks that it is a CoreOS live initramfs
// without a customization (else the error wraps ErrNotLiveInitramfs or
// ErrInitramfsCustomized), and returns the features of its etc/coreos/features.json (all
// false when absent). Only the stamp and features.json are kept in memory; paths are compared
// as the kernel unpacks them, so "./config.ign" counts as config.ign.
func InspectInitramfs(r io.Reader) (embed.Features, error) {
	var features embed.Features
	// A few names say enough; a hostile archive could hold millions.
	const maxNamed = 5
	var customized []string
	files, err := initrd.Read(r, initrd.ReadOptions{
		MaxSize:  MaxInitramfsSize,
		MaxRatio: MaxInitramfsRatio,
		// The stamp is empty and features.json a few bytes.
		MaxFileSize: maxFeaturesSize,
		Match: func(name string) bool {
			p := unpackedPath(name)
			if p == initrd.IgnitionPath || initrd.IsNetworkFile(p) {
				if len(customized) < maxNamed && !slices.Contains(customized, p) {
					customized = append(customized, p)
				}
				return false
			}
			return p == LiveInitramfsStamp || p == initramfsFeaturesPath
		},
	})
	if err != nil {
		return features, fmt.Errorf("%w: %w", ErrNotLiveInitramfs, err)
	}
	stamped := false
	for _, name := range files.Paths() {
		switch unpackedPath(name) {
		case LiveInitramfsStamp:
			stamped = true
		case initramfsFeaturesPath:
			if features, err = embed.ParseFeatures(files[name]); err != nil {
				return features, fmt.Errorf("%s in the initramfs: %w", initramfsFeaturesPath, err)
			}
		}
	}
	if !stamped {
		return features, fmt.Errorf("%w: it has no %s", ErrNotLiveInitramfs, LiveInitramfsStamp)
	}
	if len(customized) > 0 {
		return features, fmt.Errorf("%w: the initramfs already holds %s; "+
			"start from the stock initramfs", ErrInitramfsCustomized, strings.Join(customized, ", "))
	}
	return features, nil
}

// unpackedPath is where the kernel puts an archive member, relative to the root.
func unpackedPath(name string) string {
	return strings.TrimPrefix(path.Clean("/"+name), "/")
}
