package isobuilder

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
)

// maxPayloadSize bounds what an embed area may decompress to: a 256 KiB area of xz can hold a
// few MiB of Ignition; anything past this is a decompression bomb, not a config.
const maxPayloadSize = 64 << 20

// LiveISO is a CoreOS live ISO parsed once: its volume, embed areas and features. It is a
// read-only view; edits are expressed as an Image over it.
type LiveISO struct {
	file   io.ReaderAt
	size   int64
	closer io.Closer // nil when the caller owns file

	Volume   *Volume
	Ignition embed.IgnitionArea
	// Kargs is nil when the ISO has no kernel-argument areas.
	Kargs *embed.Kargs
	// Features are all false when HasFeatures is false.
	Features    embed.Features
	HasFeatures bool
	// HasMiniso reports whether coreos/miniso.dat holds a table that rebuilds a minimal
	// ISO (an unfilled placeholder does not count).
	HasMiniso bool
	// Arch is the CPU architecture the media boots, guessed from its boot files.
	Arch string
}

// Open parses the live ISO at path. The file stays open for reading until Close.
func Open(path string) (*LiveISO, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	l, err := newLiveISO(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

func newLiveISO(f *os.File) (*LiveISO, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() && st.Mode()&fs.ModeDevice == 0 {
		return nil, errors.New("not a regular file or block device")
	}
	size := st.Size()
	if st.Mode()&fs.ModeDevice != 0 {
		if size, err = f.Seek(0, 2); err != nil {
			return nil, err
		}
	}
	return parse(f, size, f)
}

// parse parses the live ISO of size bytes that r reads; Close closes closer.
func parse(r io.ReaderAt, size int64, closer io.Closer) (*LiveISO, error) {
	var err error
	l := &LiveISO{file: r, size: size, closer: closer}
	if l.Volume, err = ReadVolume(r, size); err != nil {
		return nil, err
	}
	if l.Ignition, err = embed.FindIgnitionArea(l); err != nil {
		return nil, err
	}
	if l.Kargs, err = embed.FindKargs(l); err != nil {
		return nil, err
	}
	if l.Features, l.HasFeatures, err = embed.FindFeatures(l); err != nil {
		return nil, err
	}
	if l.HasMiniso, err = l.minisoRecorded(); err != nil {
		return nil, err
	}
	l.Arch = l.guessArch()
	return l, nil
}

// minisoRecorded reports whether the ISO has a coreos/miniso.dat that starts with the
// miniso magic; build tools leave the placeholder zeroed when they did not pack one.
func (l *LiveISO) minisoRecorded() (bool, error) {
	off, length, err := l.Locate(minisoPath)
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
	if _, err := l.file.ReadAt(magic, off); err != nil {
		return false, fmt.Errorf("reading %s at byte %d: %w", minisoPath, off, err)
	}
	return string(magic) == embed.MinisoMagic, nil
}

// Close releases the ISO file that Open opened; OpenReader's reader is the caller's.
func (l *LiveISO) Close() error {
	if l.closer == nil {
		return nil
	}
	return l.closer.Close()
}

// File is the open ISO, for sinks that copy from it; nil when OpenReader parsed another
// reader.
func (l *LiveISO) File() *os.File {
	f, _ := l.file.(*os.File)
	return f
}

// Size is the ISO file's length in bytes.
func (l *LiveISO) Size() int64 { return l.size }

// ReadAt reads the pristine ISO bytes.
func (l *LiveISO) ReadAt(p []byte, off int64) (int, error) { return l.file.ReadAt(p, off) }

// Locate implements embed.ISO with coreos-installer's primary-name lookup.
func (l *LiveISO) Locate(path string) (int64, int64, error) {
	rec, err := l.Volume.Lookup(path)
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
		if _, err := l.Volume.Lookup(p.path); err == nil {
			return p.arch
		}
	}
	return "unknown"
}

// IgnitionAreaBytes returns the raw contents of the Ignition area.
func (l *LiveISO) IgnitionAreaBytes() ([]byte, error) {
	buf := make([]byte, l.Ignition.Length)
	if _, err := l.file.ReadAt(buf, l.Ignition.Offset); err != nil {
		return nil, fmt.Errorf("reading the Ignition area at byte %d: %w", l.Ignition.Offset, err)
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
		return nil, fmt.Errorf("decoding the Ignition area at byte %d of the ISO: %w", l.Ignition.Offset, err)
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
	area := make([]byte, l.Ignition.Length)
	if len(files) > 0 {
		packed, err := initrd.Pack(files)
		if err != nil {
			return Patch{}, err
		}
		if int64(len(packed)) > l.Ignition.Length {
			return Patch{}, &TooLargeError{Compressed: int64(len(packed)), Capacity: l.Ignition.Length, File: l.Ignition.File}
		}
		copy(area, packed)
	}
	return Patch{Offset: l.Ignition.Offset, Data: area}, nil
}

// CurrentKargs returns the kernel arguments in the ISO's areas, or embed.ErrNoKargs.
func (l *LiveISO) CurrentKargs() (string, error) {
	if l.Kargs == nil {
		return "", embed.ErrNoKargs
	}
	return l.Kargs.Current(l)
}

// Image returns the ISO with patches applied.
func (l *LiveISO) Image(patches ...Patch) (*Image, error) {
	return NewImage(l.file, l.size, patches...)
}
