package node

import (
	"slices"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/initrd"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/nmstate"
)

// Report describes a live ISO: what `sno-iso inspect` prints. Its JSON form is a stable
// interface for scripts.
type Report struct {
	Path         string              `json:"path"`
	Size         int64               `json:"size"`
	VolumeID     string              `json:"volumeID"`
	SystemID     string              `json:"systemID"`
	Arch         string              `json:"architecture"`
	Ignition     IgnitionAreaReport  `json:"ignitionArea"`
	Kargs        *KargsReport        `json:"kargs,omitempty"`
	Features     *embed.Features     `json:"features,omitempty"`
	Installation *InstallationReport `json:"installation,omitempty"`
	Network      *NetworkReport      `json:"network,omitempty"`
	Hostname     *HostnameReport     `json:"hostname,omitempty"`
	MinimalISO   MinimalISOReport    `json:"minimalISO"`
}

// NetworkReport is the static network the live system starts with: its keyfiles' profiles.
type NetworkReport struct {
	Profiles []nmstate.Profile `json:"profiles"`
	// CopiedToInstalledSystem says whether install-to-disk passes --copy-network, so the
	// installed node keeps these profiles.
	CopiedToInstalledSystem bool `json:"copiedToInstalledSystem"`
}

// HostnameReport is the name the node takes: the live system's /etc/hostname and the one a
// master MachineConfig writes on the installed system ("" when none).
type HostnameReport struct {
	Live      string `json:"live"`
	Installed string `json:"installed"`
}

// IgnitionAreaReport is the Ignition area and what it holds.
type IgnitionAreaReport struct {
	File      string   `json:"file"`
	Source    string   `json:"source"`
	Offset    int64    `json:"offset"`
	Length    int64    `json:"length"`
	BytesUsed int64    `json:"bytesUsed"`
	Members   []Member `json:"members"`
	// LegacyHeader is "matches", "differs" or "" (absent): the pre-2022 coreiso+ header.
	LegacyHeader string `json:"legacyHeader,omitempty"`
	// Problem says why the area cannot be decoded (an interrupted edit, say); resetting the
	// ISO empties it.
	Problem string `json:"problem,omitempty"`
}

// InstallationReport is what the embedded install-to-disk script will do.
type InstallationReport struct {
	Disk          string   `json:"disk"`
	InstallerArgs []string `json:"installerArgs"`
	// WipeDisk says that the script releases the disk's holders and wipes its signatures
	// before installing.
	WipeDisk bool `json:"wipeDisk"`
	// RebootDelayMinutes is the time between the install and the reboot; nil when the script
	// schedules no reboot that sno-iso recognises.
	RebootDelayMinutes *int     `json:"rebootDelayMinutes,omitempty"`
	MachineConfigs     []string `json:"machineConfigs,omitempty"`
	// PreInstall and PostInstall are the scripts run before and after the disk is written.
	PreInstall  []string `json:"preInstall,omitempty"`
	PostInstall []string `json:"postInstall,omitempty"`
}

// Member is one embedded file.
type Member struct {
	Path string `json:"path"`
	Size int    `json:"size"`
}

// KargsReport is the kernel-argument areas and what they hold.
type KargsReport struct {
	Source  string      `json:"source"`
	Size    int         `json:"size"`
	Areas   []KargsArea `json:"areas"`
	Default string      `json:"default"`
	// Current is empty when the areas disagree; Problem then says so.
	Current string `json:"current"`
	Problem string `json:"problem,omitempty"`
}

// KargsArea is where one kernel-argument area is and what it holds.
type KargsArea struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Kargs  string `json:"kargs"`
}

// MinimalISOReport says whether and how a minimal ISO can be made of the ISO.
type MinimalISOReport struct {
	// Available is true when a minimal ISO can be made of this one (see MinimalISO).
	Available bool `json:"available"`
	// Method is "miniso.dat" (byte for byte what coreos-installer writes) or "rebuild".
	Method string `json:"method,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Customized is set when the reason is a customization that resetting the ISO undoes.
	Customized bool `json:"-"`
	// Damaged is set when the reason is an embed area that resetting the ISO repairs.
	Damaged bool `json:"-"`
}

// Inspect describes iso; path names it in the report. An embed area that cannot be decoded
// (an interrupted edit, say) is reported as a Problem, not an error: inspecting is how one
// finds out.
func Inspect(iso *isobuilder.LiveISO, path string) (*Report, error) {
	r := &Report{
		Path: path, Size: iso.Size(), VolumeID: iso.Volume().VolumeID, SystemID: iso.Volume().SystemID, Arch: iso.Arch(),
	}
	area := iso.IgnitionArea()
	raw, err := iso.IgnitionAreaBytes()
	if err != nil {
		return nil, err
	}
	r.Ignition = IgnitionAreaReport{
		File: area.File, Source: area.Source, Offset: area.Offset, Length: area.Length,
		BytesUsed: usedBytes(raw), Members: []Member{},
	}
	files, err := iso.Payload()
	if err != nil {
		r.Ignition.Problem = err.Error()
	}
	for _, p := range files.Paths() {
		r.Ignition.Members = append(r.Ignition.Members, Member{Path: p, Size: len(files[p])})
	}
	if cfg, ok := files[initrd.IgnitionPath]; ok {
		// Only bootstrap-in-place configs have an installation to report.
		if info, err := coreos.InspectIgnition(cfg); err == nil {
			r.Installation = &InstallationReport{Disk: info.Installation.Disk, InstallerArgs: info.InstallerArgs,
				WipeDisk: info.Installation.WipeDisk, PreInstall: info.Installation.PreInstall, PostInstall: info.Installation.PostInstall}
			if d := info.Installation.RebootDelay; d != nil {
				minutes := int(*d / time.Minute)
				r.Installation.RebootDelayMinutes = &minutes
			}
			for _, mc := range info.MachineConfigs {
				r.Installation.MachineConfigs = append(r.Installation.MachineConfigs, mc.Name)
			}
			if info.Hostname != "" || info.InstalledHostname != "" {
				r.Hostname = &HostnameReport{Live: info.Hostname, Installed: info.InstalledHostname}
			}
		}
	}
	for _, p := range files.Paths() {
		if initrd.IsNetworkFile(p) {
			if r.Network == nil {
				r.Network = &NetworkReport{CopiedToInstalledSystem: r.Installation != nil && slices.Contains(r.Installation.InstallerArgs,
					"--copy-network")}
			}
			r.Network.Profiles = append(r.Network.Profiles, nmstate.Summarize(strings.TrimPrefix(p, initrd.NetworkDir+"/"), files[p]))
		}
	}
	if l := area.Legacy; l != nil {
		r.Ignition.LegacyHeader = "differs"
		if l.Offset == area.Offset && l.Length == area.Length {
			r.Ignition.LegacyHeader = "matches"
		}
	}
	if k := iso.Kargs(); k != nil {
		areaKargs, err := k.AreaKargs(iso)
		if err != nil {
			return nil, err
		}
		kr := &KargsReport{Source: k.Source, Size: k.Size, Default: k.Default}
		for i, a := range k.Areas {
			kr.Areas = append(kr.Areas, KargsArea{File: a.File, Offset: a.Offset, Kargs: areaKargs[i]})
		}
		if kr.Current, err = k.Current(iso); err != nil {
			kr.Problem = err.Error()
		}
		r.Kargs = kr
	}
	if features, ok := iso.Features(); ok {
		r.Features = &features
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

// minimalAvailability says whether a minimal ISO can be made of the ISO: it needs the
// rootfs to leave out, and no customization (miniso.dat refers to the pristine bytes, and a
// minimal ISO is made before its own customization).
func minimalAvailability(iso *isobuilder.LiveISO, r *Report, files initrd.Files) MinimalISOReport {
	if _, _, err := iso.Locate(isobuilder.PXEDir + "/ROOTFS.IMG"); err != nil {
		return MinimalISOReport{Reason: ErrAlreadyMinimal.Error()}
	}
	switch {
	case r.Ignition.Problem != "" || r.Kargs != nil && r.Kargs.Problem != "":
		return MinimalISOReport{Reason: "an embed area is damaged", Damaged: true}
	case len(files) > 0:
		return MinimalISOReport{Reason: "the Ignition area is not empty", Customized: true}
	case r.Kargs != nil && r.Kargs.Current != r.Kargs.Default:
		return MinimalISOReport{Reason: "the kernel arguments differ from the defaults", Customized: true}
	}
	return MinimalISOReport{Available: true, Method: string(ChooseMinimal(iso))}
}
