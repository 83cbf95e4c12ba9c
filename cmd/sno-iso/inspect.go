package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/urfave/cli/v2"
)

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "describe a live ISO: volume, architecture, embed areas, what is embedded, features",
		ArgsUsage: "ISO",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print a JSON document instead of text"}},
		Action:    inspect,
	}
}

// inspection is what `inspect` reports; its JSON form is a stable interface for scripts.
type inspection struct {
	Path         string              `json:"path"`
	Size         int64               `json:"size"`
	VolumeID     string              `json:"volumeID"`
	SystemID     string              `json:"systemID"`
	Arch         string              `json:"architecture"`
	Ignition     ignitionAreaReport  `json:"ignitionArea"`
	Kargs        *kargsReport        `json:"kargs,omitempty"`
	Features     *embed.Features     `json:"features,omitempty"`
	Installation *installationReport `json:"installation,omitempty"`
	MinimalISO   minimalISOReport    `json:"minimalISO"`
}

type ignitionAreaReport struct {
	File      string   `json:"file"`
	Source    string   `json:"source"`
	Offset    int64    `json:"offset"`
	Length    int64    `json:"length"`
	BytesUsed int64    `json:"bytesUsed"`
	Members   []member `json:"members"`
	// LegacyHeader is "matches", "differs" or "" (absent): the pre-2022 coreiso+ header.
	LegacyHeader string `json:"legacyHeader,omitempty"`
	// Problem says why the area cannot be decoded (an interrupted edit, say); reset cures it.
	Problem string `json:"problem,omitempty"`
}

// installationReport is what the embedded install-to-disk script will do.
type installationReport struct {
	Disk           string   `json:"disk"`
	InstallerArgs  []string `json:"installerArgs"`
	MachineConfigs []string `json:"machineConfigs,omitempty"`
}

type member struct {
	Path string `json:"path"`
	Size int    `json:"size"`
}

type kargsReport struct {
	Source  string      `json:"source"`
	Size    int         `json:"size"`
	Areas   []kargsArea `json:"areas"`
	Default string      `json:"default"`
	// Current is empty when the areas disagree; Problem then says so.
	Current string `json:"current"`
	Problem string `json:"problem,omitempty"`
}

type kargsArea struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	// Kargs is what this area holds.
	Kargs string `json:"kargs"`
}

type minimalISOReport struct {
	// Available is true when `sno-iso minimal` can make a minimal ISO of this one.
	Available bool `json:"available"`
	// Method is "miniso.dat" (byte for byte what coreos-installer writes) or "rebuild".
	Method string `json:"method,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func inspect(c *cli.Context) error {
	iso, isoPath, err := openISOArg(c)
	if err != nil {
		return err
	}
	defer iso.Close()
	r, err := inspectISO(iso, isoPath)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	printInspection(c.App.Writer, r)
	return nil
}

func inspectISO(iso *isobuilder.LiveISO, path string) (*inspection, error) {
	r := &inspection{
		Path: path, Size: iso.Size(), VolumeID: iso.Volume.VolumeID, SystemID: iso.Volume.SystemID, Arch: iso.Arch,
	}
	area := iso.Ignition
	raw, err := iso.IgnitionAreaBytes()
	if err != nil {
		return nil, err
	}
	r.Ignition = ignitionAreaReport{
		File: area.File, Source: area.Source, Offset: area.Offset, Length: area.Length,
		BytesUsed: usedBytes(raw), Members: []member{},
	}
	// An undecodable area is reported, not fatal: inspecting is how one finds out.
	files, err := iso.Payload()
	if err != nil {
		r.Ignition.Problem = err.Error()
	}
	for _, p := range files.Paths() {
		r.Ignition.Members = append(r.Ignition.Members, member{Path: p, Size: len(files[p])})
	}
	if cfg, ok := files[initrd.IgnitionPath]; ok {
		// Only bootstrap-in-place configs have an installation to report.
		if info, err := coreos.InspectIgnition(cfg); err == nil {
			r.Installation = &installationReport{Disk: info.Installation.Disk, InstallerArgs: info.InstallerArgs}
			for _, mc := range info.MachineConfigs {
				r.Installation.MachineConfigs = append(r.Installation.MachineConfigs, mc.Name)
			}
		}
	}
	if l := area.Legacy; l != nil {
		r.Ignition.LegacyHeader = "differs"
		if l.Offset == area.Offset && l.Length == area.Length {
			r.Ignition.LegacyHeader = "matches"
		}
	}
	if k := iso.Kargs; k != nil {
		areaKargs, err := k.AreaKargs(iso)
		if err != nil {
			return nil, err
		}
		kr := &kargsReport{Source: k.Source, Size: k.Size, Default: k.Default}
		for i, a := range k.Areas {
			kr.Areas = append(kr.Areas, kargsArea{File: a.File, Offset: a.Offset, Kargs: areaKargs[i]})
		}
		if kr.Current, err = k.Current(iso); err != nil {
			kr.Problem = err.Error()
		}
		r.Kargs = kr
	}
	if iso.HasFeatures {
		r.Features = &iso.Features
	}
	r.MinimalISO = minimalAvailability(iso, r, files)
	return r, nil
}

// usedBytes is the length of the area up to its last non-zero byte: what the payload takes.
func usedBytes(area []byte) int64 {
	n := len(area)
	for n > 0 && area[n-1] == 0 {
		n--
	}
	return int64(n)
}

// minimalAvailability says whether `sno-iso minimal` can work on the ISO: it needs the
// rootfs to leave out, and no customization (miniso.dat refers to the pristine bytes, and a
// minimal ISO is made before its own customization).
func minimalAvailability(iso *isobuilder.LiveISO, r *inspection, files initrd.Files) minimalISOReport {
	if _, _, err := iso.Locate("IMAGES/PXEBOOT/ROOTFS.IMG"); err != nil {
		return minimalISOReport{Reason: "there is no images/pxeboot/rootfs.img to leave out: this is a minimal ISO already"}
	}
	switch {
	case r.Ignition.Problem != "" || r.Kargs != nil && r.Kargs.Problem != "":
		return minimalISOReport{Reason: "an embed area is damaged (`sno-iso reset` repairs it)"}
	case len(files) > 0:
		return minimalISOReport{Reason: "the Ignition area is not empty (`sno-iso reset` undoes the customizations)"}
	case r.Kargs != nil && r.Kargs.Current != r.Kargs.Default:
		return minimalISOReport{Reason: "the kernel arguments differ from the defaults (`sno-iso reset` undoes the customizations)"}
	case iso.HasMiniso:
		return minimalISOReport{Available: true, Method: "miniso.dat"}
	}
	return minimalISOReport{Available: true, Method: "rebuild"}
}

func printInspection(w io.Writer, r *inspection) {
	fmt.Fprintf(w, "ISO:           %s (%d bytes)\n", r.Path, r.Size)
	fmt.Fprintf(w, "Volume ID:     %s\n", r.VolumeID)
	if r.SystemID != "" {
		fmt.Fprintf(w, "System ID:     %s\n", r.SystemID)
	}
	fmt.Fprintf(w, "Architecture:  %s\n", r.Arch)
	a := r.Ignition
	fmt.Fprintf(w, "Ignition area: %s, bytes %d to %d (%d bytes, found through %s)\n", a.File, a.Offset, a.Offset+a.Length, a.Length, a.Source)
	if a.LegacyHeader != "" {
		fmt.Fprintf(w, "               legacy coreiso+ header %s\n", a.LegacyHeader)
	}
	if a.Problem != "" {
		fmt.Fprintf(w, "               DAMAGED: %s; `sno-iso reset` empties it\n", a.Problem)
	} else if len(a.Members) == 0 {
		fmt.Fprintf(w, "               empty (pristine)\n")
	} else {
		fmt.Fprintf(w, "               %d of %d bytes used (%.1f%%)\n", a.BytesUsed, a.Length, 100*float64(a.BytesUsed)/float64(a.Length))
		for _, m := range a.Members {
			fmt.Fprintf(w, "               %s (%d bytes)\n", m.Path, m.Size)
		}
	}
	if in := r.Installation; in != nil {
		fmt.Fprintf(w, "Installation:  to %s by coreos-installer %s\n", in.Disk, strings.Join(in.InstallerArgs, " "))
		if len(in.MachineConfigs) > 0 {
			fmt.Fprintf(w, "               MachineConfigs handed to the Machine Config Operator:\n")
			for _, name := range in.MachineConfigs {
				fmt.Fprintf(w, "                 %s\n", name)
			}
		}
	}
	if k := r.Kargs; k != nil {
		offs := make([]string, len(k.Areas))
		for i, ar := range k.Areas {
			offs[i] = fmt.Sprintf("%s@%d", ar.File, ar.Offset)
		}
		fmt.Fprintf(w, "Kernel args:   %d area(s) of %d bytes (%s): %s\n", len(k.Areas), k.Size, k.Source, strings.Join(offs, ", "))
		fmt.Fprintf(w, "  default:     %s\n", k.Default)
		if k.Problem != "" {
			fmt.Fprintf(w, "  current:     DAMAGED, the areas disagree (`sno-iso kargs reset` repairs them):\n")
			for _, ar := range k.Areas {
				fmt.Fprintf(w, "    %s@%d: %q\n", ar.File, ar.Offset, ar.Kargs)
			}
		} else if k.Current == k.Default {
			fmt.Fprintf(w, "  current:     (default)\n")
		} else {
			fmt.Fprintf(w, "  current:     %s\n", k.Current)
		}
	} else {
		fmt.Fprintf(w, "Kernel args:   no karg embed areas\n")
	}
	if f := r.Features; f != nil {
		fmt.Fprintf(w, "Features:      installer-config=%t live-initrd-network=%t\n", f.InstallerConfig, f.LiveInitrdNetwork)
	} else {
		fmt.Fprintf(w, "Features:      none declared (no coreos/features.json)\n")
	}
	switch {
	case r.MinimalISO.Method == "miniso.dat":
		fmt.Fprintf(w, "Minimal ISO:   can be extracted from coreos/miniso.dat, as coreos-installer does\n")
	case r.MinimalISO.Available:
		fmt.Fprintf(w, "Minimal ISO:   can be rebuilt (no coreos/miniso.dat)\n")
	default:
		fmt.Fprintf(w, "Minimal ISO:   cannot be extracted: %s\n", r.MinimalISO.Reason)
	}
}
