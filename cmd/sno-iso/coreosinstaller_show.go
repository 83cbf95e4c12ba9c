package main

import (
	"encoding/json"
	"fmt"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

// The JSON documents of coreos-installer's `dev show iso`, field for field and in its order,
// for the scripts and tests that read them.

// showISO is `dev show iso ISO`: the volume descriptors and every path of the primary tree.
type showISO struct {
	Header struct {
		Descriptors []any `json:"descriptors"`
	} `json:"header"`
	Records []string `json:"records"`
}

type showPrimary struct {
	Type            string        `json:"type"`
	SystemID        string        `json:"system_id"`
	VolumeID        string        `json:"volume_id"`
	VolumeSpaceSize uint32        `json:"volume_space_size"`
	Root            showDirectory `json:"root"`
}

type showDirectory struct {
	Name    string `json:"name"`
	Address uint32 `json:"address"` // LBA
	Length  uint32 `json:"length"`
}

type showBoot struct {
	Type         string `json:"type"`
	BootSystemID string `json:"boot_system_id"`
	BootID       string `json:"boot_id"`
}

type showOther struct {
	Type   string `json:"type"`
	TypeID *byte  `json:"type_id,omitempty"` // unknown descriptors only
}

// showArea is `dev show iso --ignition`, and each area of --kargs.
type showArea struct {
	Offset int64   `json:"offset"`
	Length int64   `json:"length"`
	Pad    *string `json:"pad,omitempty"`
	End    *string `json:"end,omitempty"`
}

// showKargsDoc is `dev show iso --kargs`; an ISO without kargs areas shows null.
type showKargsDoc struct {
	Length  int        `json:"length"`
	Default string     `json:"default"`
	Kargs   []showArea `json:"kargs"`
}

func devShowISO(c *cli.Context) error {
	if c.Bool("ignition") && c.Bool("kargs") {
		return usagef("--ignition and --kargs cannot be used together")
	}
	path, err := isoArg(c)
	if err != nil {
		return err
	}
	var doc any
	if c.Bool("ignition") || c.Bool("kargs") {
		iso, err := isobuilder.Open(path)
		if err != nil {
			return err
		}
		defer iso.Close()
		if c.Bool("ignition") {
			area := iso.IgnitionArea()
			doc = showArea{Offset: area.Offset, Length: area.Length}
		} else {
			doc = kargsDocument(iso)
		}
	} else if doc, err = volumeDocument(path); err != nil {
		return err
	}
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

func kargsDocument(iso *isobuilder.LiveISO) *showKargsDoc {
	k := iso.Kargs()
	if k == nil {
		return nil
	}
	doc := &showKargsDoc{Length: k.Size, Default: k.Default, Kargs: []showArea{}}
	for _, a := range k.Areas {
		area := showArea{Offset: a.Offset, Length: a.Length}
		if a.ExplicitPad {
			pad := string(rune(a.Pad))
			area.Pad = &pad
		}
		if a.ExplicitTerminator {
			end := string(rune(a.Terminator))
			area.End = &end
		}
		doc.Kargs = append(doc.Kargs, area)
	}
	return doc
}

// volumeDocument reads any ISO9660 image, CoreOS or not, as coreos-installer does here.
func volumeDocument(path string) (*showISO, error) {
	f, size, err := isobuilder.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := isobuilder.ReadVolume(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	doc := &showISO{Records: []string{}}
	doc.Header.Descriptors = []any{}
	for _, d := range v.Descriptors {
		switch d.Type {
		case "primary":
			doc.Header.Descriptors = append(doc.Header.Descriptors, showPrimary{
				Type: d.Type, SystemID: d.SystemID, VolumeID: d.VolumeID, VolumeSpaceSize: d.SpaceSize,
				Root: showDirectory{Name: d.Root.Name, Address: d.Root.LBA, Length: d.Root.Length},
			})
		case "boot":
			doc.Header.Descriptors = append(doc.Header.Descriptors, showBoot{Type: d.Type, BootSystemID: d.BootSystemID, BootID: d.BootID})
		case "unknown":
			code := d.TypeCode
			doc.Header.Descriptors = append(doc.Header.Descriptors, showOther{Type: d.Type, TypeID: &code})
		default:
			doc.Header.Descriptors = append(doc.Header.Descriptors, showOther{Type: d.Type})
		}
	}
	err = v.Walk(func(e isobuilder.WalkEntry) error {
		doc.Records = append(doc.Records, e.Path)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
}
