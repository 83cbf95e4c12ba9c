package embed

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sno-iso/sno-iso/internal/safetext"
)

// Where coreos-installer looks for the Ignition area, in this order.
const (
	igninfoPath        = "COREOS/IGNINFO.JSO"
	ignitionImagePath  = "IMAGES/IGNITION.IMG"
	legacyIgnMagic     = "coreiso+"
	legacyIgnHeaderOff = SystemAreaSize - 24
)

// ErrUnrecognizedISO is wrapped by every error that says an ISO lacks what every CoreOS live
// ISO has. Its text is coreos-installer's, which scripts grep for.
var ErrUnrecognizedISO = errors.New("Unrecognized CoreOS ISO image")

// ErrNotLiveISO is returned when an ISO has no Ignition area: it is not a CoreOS live ISO.
var ErrNotLiveISO = fmt.Errorf("%w: no Ignition embed area (neither coreos/igninfo.json nor images/ignition.img); "+
	"is this a CoreOS or RHCOS live ISO?", ErrUnrecognizedISO)

// Area is a span of the ISO that a tool may rewrite.
type Area struct {
	// File is the ISO path holding the area, as found (e.g. "IMAGES/IGNITION.IMG").
	File string
	// Offset is the area's byte offset in the ISO file; Length its size in bytes.
	Offset, Length int64
}

// End is the offset just past the area.
func (a Area) End() int64 { return a.Offset + a.Length }

// IgnitionArea is where the live system's Ignition config and network keyfiles are embedded.
type IgnitionArea struct {
	Area
	// Source says how the area was found: "coreos/igninfo.json" or "images/ignition.img".
	Source string
	// Legacy is the area named by the pre-2022 coreiso+ header, when that header is present.
	// coreos-installer no longer reads it; it is reported and cross-checked only.
	Legacy *Area
}

// igninfo is coreos/igninfo.json.
type igninfo struct {
	File   string `json:"file"`
	Offset *int64 `json:"offset"`
	Length *int64 `json:"length"`
}

// ParseIgninfo decodes coreos/igninfo.json.
func ParseIgninfo(b []byte) (file string, offset, length *int64, err error) {
	var info igninfo
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&info); err != nil {
		return "", nil, nil, fmt.Errorf("parsing coreos/igninfo.json: %w", err)
	}
	if info.File == "" {
		return "", nil, nil, errors.New("parsing coreos/igninfo.json: no \"file\" given")
	}
	if info.Offset != nil && *info.Offset < 0 || info.Length != nil && *info.Length < 0 {
		return "", nil, nil, errors.New("parsing coreos/igninfo.json: negative offset or length")
	}
	return info.File, info.Offset, info.Length, nil
}

// FindIgnitionArea locates the Ignition embed area as coreos-installer does: the file named
// by coreos/igninfo.json (with its optional offset and length), else images/ignition.img.
func FindIgnitionArea(iso ISO) (IgnitionArea, error) {
	var area IgnitionArea
	info, found, err := readFile(iso, igninfoPath)
	if err != nil {
		return area, err
	}
	if found {
		file, offset, length, err := ParseIgninfo(info)
		if err != nil {
			return area, err
		}
		path := strings.ToUpper(file)
		fileOff, fileLen, err := iso.Locate(path)
		if err != nil {
			return area, fmt.Errorf("coreos/igninfo.json names %s: %w; %w", safetext.Escape(file), err, ErrNotLiveISO)
		}
		area.File, area.Source = path, "coreos/igninfo.json"
		var off int64
		if offset != nil {
			off = *offset
		}
		if off > fileLen {
			return area, fmt.Errorf("coreos/igninfo.json offset %d is past the end of %s (%d bytes); corrupt ISO?", off, file, fileLen)
		}
		area.Offset, area.Length = fileOff+off, fileLen-off
		if length != nil {
			if *length > fileLen-off { // off <= fileLen: no overflow, unlike off+length
				return area, fmt.Errorf("coreos/igninfo.json area (offset %d, length %d) runs past the end of %s (%d bytes); "+
					"corrupt ISO?", off, *length, file, fileLen)
			}
			area.Length = *length
		}
	} else {
		off, length, err := iso.Locate(ignitionImagePath)
		if err != nil {
			return area, ErrNotLiveISO
		}
		area.File, area.Source = ignitionImagePath, "images/ignition.img"
		area.Offset, area.Length = off, length
	}
	if area.End() > iso.Size() {
		return area, fmt.Errorf("the Ignition area (bytes %d to %d) lies past the end of the ISO (%d bytes); "+
			"the ISO image is incomplete", area.Offset, area.End(), iso.Size())
	}
	if area.Length == 0 {
		return area, fmt.Errorf("the Ignition area in %s is empty; corrupt ISO?", area.File)
	}
	legacy, err := legacyIgnitionHeader(iso)
	if err != nil {
		return area, err
	}
	area.Legacy = legacy
	return area, nil
}

// legacyIgnitionHeader decodes the coreiso+ header at the end of the system area, if any.
func legacyIgnitionHeader(iso ISO) (*Area, error) {
	if iso.Size() < SystemAreaSize {
		return nil, nil
	}
	var hdr [24]byte
	if _, err := iso.ReadAt(hdr[:], legacyIgnHeaderOff); err != nil {
		return nil, fmt.Errorf("reading the system area: %w", err)
	}
	if string(hdr[:8]) != legacyIgnMagic {
		return nil, nil
	}
	off := binary.LittleEndian.Uint64(hdr[8:16])
	length := binary.LittleEndian.Uint64(hdr[16:24])
	if off > uint64(iso.Size()) || length > uint64(iso.Size()) {
		return nil, nil // a stale or foreign header: coreos-installer ignores it, so do we
	}
	return &Area{File: "coreiso+ header", Offset: int64(off), Length: int64(length)}, nil
}

// IsZero reports whether every byte of b is zero: a pristine area.
func IsZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
