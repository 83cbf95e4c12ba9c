package embed

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/sno-iso/sno-iso/internal/safetext"
)

const (
	kargsJSONPath       = "COREOS/KARGS.JSO"
	legacyKargsMagic    = "coreKarg"
	legacyKargsOff      = SystemAreaSize - 24 - 72
	legacyKargsMaxAreas = 6
	// maxKargsAreaSize is the largest area coreos-installer accepts.
	maxKargsAreaSize = 2048
	defaultPad       = '#'
	defaultEnd       = '\n'
)

// ErrNoKargs is returned by commands that need kernel-argument areas on an ISO without them.
// It starts with coreos-installer's words, which scripts grep for.
var ErrNoKargs = errors.New("No karg embed areas found; " +
	"this ISO is too old to carry live kernel arguments (RHCOS 4.6 and earlier) or corrupt")

// KargsArea is one place where the live kernel command line is stored.
type KargsArea struct {
	Area
	// Terminator follows the kargs; Pad fills the rest of the area.
	Terminator, Pad byte
	// ExplicitTerminator and ExplicitPad say that coreos/kargs.json names them; otherwise
	// they are the defaults ('\n' and '#').
	ExplicitTerminator, ExplicitPad bool
}

// Kargs describes an ISO's kernel-argument areas.
type Kargs struct {
	// Default is the pristine command line the ISO was built with.
	Default string
	// Size is the length of each area.
	Size int
	// Areas are sorted by offset.
	Areas []KargsArea
	// Source says how the areas were found: "coreos/kargs.json" or "coreKarg header".
	Source string
}

// FindKargs locates the kernel-argument areas: coreos/kargs.json, else the legacy coreKarg
// header. It returns nil and no error when the ISO has neither (kargs unsupported).
func FindKargs(iso ISO) (*Kargs, error) {
	raw, found, err := readFile(iso, kargsJSONPath)
	if err != nil {
		return nil, err
	}
	var k *Kargs
	if found {
		k, err = kargsFromJSON(iso, raw)
	} else {
		k, err = kargsFromHeader(iso)
	}
	if err != nil || k == nil {
		return nil, err
	}
	if len(k.Areas) == 0 {
		return nil, fmt.Errorf("%s lists no karg embed areas; corrupt ISO?", k.Source)
	}
	sort.Slice(k.Areas, func(i, j int) bool { return k.Areas[i].Offset < k.Areas[j].Offset })
	for _, a := range k.Areas {
		if a.End() > iso.Size() {
			return nil, fmt.Errorf("karg area at byte %d (in %s) lies past the end of the ISO (%d bytes); "+
				"the ISO image is incomplete", a.Offset, a.File, iso.Size())
		}
	}
	return k, nil
}

func kargsFromJSON(iso ISO, raw []byte) (*Kargs, error) {
	var j kargsJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("parsing coreos/kargs.json: %w", err)
	}
	if j.Size <= 0 || j.Size > maxKargsAreaSize {
		return nil, fmt.Errorf("coreos/kargs.json: karg area size %d is not between 1 and %d; corrupt ISO?", j.Size, maxKargsAreaSize)
	}
	if len(j.Default) > j.Size {
		return nil, fmt.Errorf("coreos/kargs.json: default kargs (%d bytes) are larger than the areas (%d bytes); "+
			"corrupt ISO?", len(j.Default), j.Size)
	}
	k := &Kargs{Default: j.Default, Size: j.Size, Source: "coreos/kargs.json"}
	for _, f := range j.Files {
		path := strings.ToUpper(f.Path)
		fileOff, fileLen, err := iso.Locate(path)
		if err != nil {
			return nil, fmt.Errorf("coreos/kargs.json names %s: %w", safetext.Escape(f.Path), err)
		}
		if f.Offset < 0 || f.Offset > fileLen-int64(j.Size) { // never Offset+Size: it may overflow
			return nil, fmt.Errorf("coreos/kargs.json: area at offset %d of %s runs past its end (%d bytes); "+
				"corrupt ISO?", f.Offset, f.Path, fileLen)
		}
		pad, err := oneChar(f.Pad, defaultPad, "pad", f.Path)
		if err != nil {
			return nil, err
		}
		end, err := oneChar(f.End, defaultEnd, "end", f.Path)
		if err != nil {
			return nil, err
		}
		k.Areas = append(k.Areas, KargsArea{
			Area: Area{File: path, Offset: fileOff + f.Offset, Length: int64(j.Size)},
			Pad:  pad, Terminator: end, ExplicitPad: f.Pad != nil, ExplicitTerminator: f.End != nil,
		})
	}
	return k, nil
}

func oneChar(s *string, def byte, field, file string) (byte, error) {
	if s == nil {
		return def, nil
	}
	if len(*s) != 1 {
		return 0, fmt.Errorf("coreos/kargs.json: %s character for %s is %q, not a single byte", field, file, *s)
	}
	return (*s)[0], nil
}

// kargsFromHeader decodes the coreKarg header of RHCOS 4.7-era ISOs.
func kargsFromHeader(iso ISO) (*Kargs, error) {
	if iso.Size() < SystemAreaSize {
		return nil, nil
	}
	var hdr [72]byte
	if _, err := iso.ReadAt(hdr[:], legacyKargsOff); err != nil {
		return nil, fmt.Errorf("reading the system area: %w", err)
	}
	if string(hdr[:8]) != legacyKargsMagic {
		return nil, nil
	}
	size := binary.LittleEndian.Uint64(hdr[8:16])
	if size == 0 || size > maxKargsAreaSize {
		return nil, fmt.Errorf("coreKarg header: karg area length %d is not between 1 and %d; corrupt ISO?", size, maxKargsAreaSize)
	}
	defaultOff := int64(binary.LittleEndian.Uint64(hdr[16:24]))
	defaults, err := readSpan(iso, defaultOff, int64(size), "default kargs (coreKarg header)")
	if err != nil {
		return nil, err
	}
	k := &Kargs{Size: int(size), Source: "coreKarg header"}
	if k.Default, err = ParseKargsArea(defaults, defaultPad, defaultEnd); err != nil {
		return nil, fmt.Errorf("default kargs at byte %d: %w", defaultOff, err)
	}
	for i := range legacyKargsMaxAreas {
		off := binary.LittleEndian.Uint64(hdr[24+8*i : 32+8*i])
		if off == 0 {
			break
		}
		if off > uint64(iso.Size()) {
			return nil, fmt.Errorf("coreKarg header: area %d at byte %d is past the end of the ISO (%d bytes); "+
				"the ISO image is incomplete", i, off, iso.Size())
		}
		k.Areas = append(k.Areas, KargsArea{
			Area: Area{File: "coreKarg header", Offset: int64(off), Length: int64(size)},
			Pad:  defaultPad, Terminator: defaultEnd,
		})
	}
	return k, nil
}

// ParseKargsArea decodes the kargs stored in one area: the text before the end character,
// with the padding and surrounding white space removed.
func ParseKargsArea(b []byte, pad, end byte) (string, error) {
	if !utf8.Valid(b) {
		return "", errors.New("invalid UTF-8 in karg area")
	}
	b = bytes.TrimRight(b, string(pad))
	b = bytes.TrimRight(b, string(end))
	return strings.TrimSpace(string(b)), nil
}

// ErrKargsDisagree says that an ISO's kernel-argument areas hold different command lines;
// writing the defaults (or any kargs) to every area repairs it. A *KargsMismatchError wraps it.
var ErrKargsDisagree = errors.New("karg areas disagree")

// KargsMismatchError says which karg areas hold which command lines: an in-place edit was
// interrupted between areas, or a tool that missed an area edited the ISO.
type KargsMismatchError struct {
	Areas []KargsArea
	Kargs []string // what each area holds
}

func (e *KargsMismatchError) Error() string {
	for i := range e.Kargs {
		if e.Kargs[i] != e.Kargs[0] {
			return fmt.Sprintf("%v: byte %d (%s) has %q but byte %d (%s) has %q; an in-place edit was interrupted or a tool missed an area",
				ErrKargsDisagree, e.Areas[0].Offset, e.Areas[0].File, e.Kargs[0], e.Areas[i].Offset, e.Areas[i].File, e.Kargs[i])
		}
	}
	return ErrKargsDisagree.Error()
}

func (e *KargsMismatchError) Unwrap() error { return ErrKargsDisagree }

// AreaKargs reads every area and returns the kargs each holds, in the order of k.Areas.
func (k *Kargs) AreaKargs(iso ISO) ([]string, error) {
	kargs := make([]string, len(k.Areas))
	for i, a := range k.Areas {
		b, err := readSpan(iso, a.Offset, a.Length, "karg area")
		if err != nil {
			return nil, err
		}
		if kargs[i], err = ParseKargsArea(b, a.Pad, a.Terminator); err != nil {
			return nil, fmt.Errorf("karg area at byte %d: %w", a.Offset, err)
		}
	}
	return kargs, nil
}

// Current reads every area and returns the kargs they hold, or a *KargsMismatchError when
// they do not all agree.
func (k *Kargs) Current(iso ISO) (string, error) {
	kargs, err := k.AreaKargs(iso)
	if err != nil {
		return "", err
	}
	for _, s := range kargs {
		if s != kargs[0] {
			return "", &KargsMismatchError{Areas: k.Areas, Kargs: kargs}
		}
	}
	return kargs[0], nil
}

// Render returns the bytes to write into area a for kargs: the kargs, the end character, then
// padding to the full size. kargs must leave room for the end character.
func (k *Kargs) Render(a KargsArea, kargs string) ([]byte, error) {
	kargs = strings.TrimSpace(kargs)
	if len(kargs) >= k.Size {
		return nil, fmt.Errorf("kargs too large for area: %d vs %d bytes; remove or shorten kernel arguments", len(kargs)+1, k.Size)
	}
	b := bytes.Repeat([]byte{a.Pad}, k.Size)
	copy(b, kargs)
	b[len(kargs)] = a.Terminator
	return b, nil
}
