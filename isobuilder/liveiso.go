package isobuilder

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/internal/input"
)

// maxPayloadSize bounds what an embed area may decompress to: a 256 KiB area of xz can hold a
// few MiB of Ignition; anything past this is a decompression bomb, not a config.
const maxPayloadSize = 64 << 20

// LiveISO is a CoreOS live ISO parsed once: its volume, embed areas and features. It is a
// read-only view over an io.ReaderAt (a local file, or any other source of the bytes); edits
// are expressed as an Image over it.
type LiveISO struct {
	base   io.ReaderAt
	size   int64
	closer io.Closer // nil when the caller owns base

	volume      *Volume
	ignition    embed.IgnitionArea
	kargs       *embed.Kargs // nil when the ISO has no kernel-argument areas
	features    embed.Features
	hasFeatures bool
	hasMiniso   bool
	arch        string
}

// Open parses the live ISO at path (a regular file or a block device). The file stays open
// for reading until Close.
func Open(path string) (*LiveISO, error) {
	f, size, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	l, err := OpenReader(f, size)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	l.closer = f
	return l, nil
}

// OpenFile opens the ISO image at path for reading, refusing (without waiting on it)
// anything but a regular file or a block device, and returns it with its size: what Open
// parses, and what ReadVolume reads any ISO9660 image from.
func OpenFile(path string) (*os.File, int64, error) {
	f, _, err := input.Open(path, os.O_RDONLY)
	if err != nil {
		return nil, 0, err
	}
	size, err := isoFileSize(f)
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return f, size, nil
}

// openOSFile parses the ISO in f, opened by input.Open.
func openOSFile(f *os.File) (*LiveISO, error) {
	size, err := isoFileSize(f)
	if err != nil {
		return nil, err
	}
	l, err := OpenReader(f, size)
	if err != nil {
		return nil, err
	}
	l.closer = f
	return l, nil
}

// isoFileSize checks that f is a regular file or a block device and returns its size.
func isoFileSize(f *os.File) (int64, error) {
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if err := checkISOFileKind(info); err != nil {
		return 0, err
	}
	if info.Mode()&fs.ModeDevice != 0 {
		return f.Seek(0, io.SeekEnd)
	}
	return info.Size(), nil
}

// ErrNotISOFile says that an ISO path names something other than a regular file or a block
// device: a named pipe, a directory, a character device.
var ErrNotISOFile = errors.New("not a regular file or block device")

func checkISOFileKind(info fs.FileInfo) error {
	mode := info.Mode()
	if mode.IsRegular() || (mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0) {
		return nil
	}
	return fmt.Errorf("%s, %w (an ISO must be one)", input.Kind(mode), ErrNotISOFile)
}

// OpenReader parses the live ISO of size bytes that r reads. r must stay readable while the
// LiveISO is used; Close does not close it. Sinks copy through the kernel when r is an
// *os.File, and through a buffer otherwise.
func OpenReader(r io.ReaderAt, size int64) (*LiveISO, error) {
	if size < 0 {
		return nil, fmt.Errorf("negative ISO size %d", size)
	}
	l := &LiveISO{base: r, size: size}
	var err error
	if l.volume, err = ReadVolume(r, size); err != nil {
		return nil, err
	}
	if l.ignition, err = embed.FindIgnitionArea(l); err != nil {
		return nil, err
	}
	if l.kargs, err = embed.FindKargs(l); err != nil {
		return nil, err
	}
	if err := l.validateAreas(); err != nil {
		return nil, err
	}
	if l.features, l.hasFeatures, err = embed.FindFeatures(l); err != nil {
		return nil, err
	}
	if l.hasMiniso, err = l.minisoRecorded(); err != nil {
		return nil, err
	}
	l.arch = l.guessArch()
	return l, nil
}

// Volume is the ISO's primary volume.
func (l *LiveISO) Volume() *Volume { return l.volume }

// IgnitionArea is where the ISO embeds an Ignition config. The result is a copy.
func (l *LiveISO) IgnitionArea() embed.IgnitionArea {
	area := l.ignition
	if area.Legacy != nil {
		legacy := *area.Legacy
		area.Legacy = &legacy
	}
	return area
}

// Kargs describes the kernel-argument areas, or is nil when the ISO has none. The result is
// a copy.
func (l *LiveISO) Kargs() *embed.Kargs {
	if l.kargs == nil {
		return nil
	}
	k := *l.kargs
	k.Areas = slices.Clone(k.Areas)
	return &k
}

// Features returns what coreos/features.json declares; ok is false when the ISO has no such
// file (the features are then all false). The result is a copy.
func (l *LiveISO) Features() (features embed.Features, ok bool) {
	features = l.features
	features.InstallerConfigDirectives = maps.Clone(features.InstallerConfigDirectives)
	return features, l.hasFeatures
}

// HasMiniso reports whether coreos/miniso.dat holds a table that rebuilds a minimal ISO (an
// unfilled placeholder does not count).
func (l *LiveISO) HasMiniso() bool { return l.hasMiniso }

// MinisoExtent is where coreos/miniso.dat lies in the ISO; ok is false when it has none.
func (l *LiveISO) MinisoExtent() (off, length int64, ok bool) {
	off, length, err := l.Locate(embed.MinisoPath)
	return off, length, err == nil
}

// Arch is the CPU architecture the media boots, guessed from its boot files.
func (l *LiveISO) Arch() string { return l.arch }

// minisoRecorded reports whether the ISO has a coreos/miniso.dat that starts with the
// miniso magic; build tools leave the placeholder zeroed when they did not pack one.
func (l *LiveISO) minisoRecorded() (bool, error) {
	off, length, err := l.Locate(embed.MinisoPath)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	magic := make([]byte, len(embed.MinisoMagic))
	if length < int64(len(magic)) {
		return false, nil
	}
	if _, err := l.base.ReadAt(magic, off); err != nil {
		return false, fmt.Errorf("reading %s at byte %d: %w", embed.MinisoPath, off, err)
	}
	return string(magic) == embed.MinisoMagic, nil
}

// Close releases the ISO file that Open opened; it does nothing for OpenReader's reader.
func (l *LiveISO) Close() error {
	if l.closer == nil {
		return nil
	}
	return l.closer.Close()
}

// Base is what the pristine bytes are read from: the *os.File that Open opened, or the
// reader given to OpenReader.
func (l *LiveISO) Base() io.ReaderAt { return l.base }

// Size is the ISO file's length in bytes.
func (l *LiveISO) Size() int64 { return l.size }

// ReadAt reads the pristine ISO bytes.
func (l *LiveISO) ReadAt(p []byte, off int64) (int, error) { return l.base.ReadAt(p, off) }

// Locate implements embed.ISO with coreos-installer's primary-name lookup.
func (l *LiveISO) Locate(path string) (int64, int64, error) {
	rec, err := l.volume.Lookup(path)
	if err != nil {
		return 0, 0, err
	}
	return rec.Offset(), int64(rec.Length), nil
}

// guessArch names the architecture from the boot files every CoreOS build ships.
func (l *LiveISO) guessArch() string {
	probes := []struct{ path, arch string }{
		{"IMAGES/CDBOOT.IMG", "s390x"},
		{"EFI/BOOT/BOOTAA64.EFI", "aarch64"},
		{"BOOT/GRUB/POWERPC.ELF", "ppc64le"},
		{"ISOLINUX/ISOLINUX.BIN", "x86_64"},
		{"EFI/BOOT/BOOTX64.EFI", "x86_64"},
	}
	for _, p := range probes {
		if _, err := l.volume.Lookup(p.path); err == nil {
			return p.arch
		}
	}
	return "unknown"
}

// IgnitionAreaBytes returns the raw contents of the Ignition area.
func (l *LiveISO) IgnitionAreaBytes() ([]byte, error) {
	buf := make([]byte, l.ignition.Length)
	if _, err := l.base.ReadAt(buf, l.ignition.Offset); err != nil {
		return nil, fmt.Errorf("reading the Ignition area at byte %d: %w", l.ignition.Offset, err)
	}
	return buf, nil
}

// Payload decodes what is embedded in the Ignition area: an empty set for a pristine (all
// zero) area.
func (l *LiveISO) Payload() (initrd.Files, error) {
	raw, err := l.IgnitionAreaBytes()
	if err != nil {
		return nil, err
	}
	if embed.IsZero(raw) {
		return initrd.Files{}, nil
	}
	files, err := initrd.Read(bytes.NewReader(raw), initrd.ReadOptions{MaxSize: maxPayloadSize})
	if err != nil {
		return nil, fmt.Errorf("decoding the Ignition area at byte %d of the ISO: %w", l.ignition.Offset, err)
	}
	return files, nil
}

// TooLargeError says that a payload does not fit the Ignition area.
type TooLargeError struct {
	Compressed, Capacity int64
	File                 string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("compressed payload is too large: %d > %d bytes, the size of the Ignition area in %s (%d bytes over)",
		e.Compressed, e.Capacity, e.File, e.Compressed-e.Capacity)
}

// PayloadPatch returns the patch that makes the Ignition area hold files: their xz newc
// archive followed by zeros, or all zeros when files is empty (never an empty archive).
func (l *LiveISO) PayloadPatch(files initrd.Files) (Patch, error) {
	area := make([]byte, l.ignition.Length)
	if len(files) > 0 {
		packed, err := initrd.Pack(files)
		if err != nil {
			return Patch{}, err
		}
		if int64(len(packed)) > l.ignition.Length {
			return Patch{}, &TooLargeError{Compressed: int64(len(packed)), Capacity: l.ignition.Length, File: l.ignition.File}
		}
		copy(area, packed)
	}
	return Patch{Offset: l.ignition.Offset, Data: area}, nil
}

// CurrentKargs returns the kernel arguments in the ISO's areas, or embed.ErrNoKargs.
func (l *LiveISO) CurrentKargs() (string, error) {
	if l.kargs == nil {
		return "", embed.ErrNoKargs
	}
	return l.kargs.Current(l)
}

// Image returns the ISO with patches applied.
func (l *LiveISO) Image(patches ...Patch) (*Image, error) {
	return NewImage(l.base, l.size, patches...)
}
