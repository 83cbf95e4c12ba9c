package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sno-iso/sno-iso/coreos"
	"github.com/sno-iso/sno-iso/embed"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// PXESet is a node's PXE directory before it is written: the ISO's kernel and rootfs, its
// live initramfs with the node's payload appended, and the boot configurations.
type PXESet struct {
	iso    *isobuilder.LiveISO
	node   *Node
	files  map[string]isobuilder.PXEFile // kernel, initramfs and rootfs by name
	layout BootLayout
}

// PXE lays out the node's PXE directory over iso. baseURL is where the directory will be
// served (an http(s) URL without a trailing slash), or empty for loaders that fetch files
// relative to their configuration.
func (n *Node) PXE(iso *isobuilder.LiveISO, baseURL string) (*PXESet, error) {
	files, err := PXEFiles(iso)
	if err != nil {
		return nil, &ISOError{Err: err}
	}
	s := &PXESet{iso: iso, node: n, files: files}
	kargs, err := PXEKargs(iso, n.LiveKargs)
	if err != nil {
		return nil, &ISOError{Err: err}
	}
	s.layout = BootLayout{BaseURL: baseURL, Kargs: kargs}
	return s, nil
}

// PXEFiles finds the kernel, initramfs and rootfs of iso, by the names a PXE directory gives
// them.
func PXEFiles(iso *isobuilder.LiveISO) (map[string]isobuilder.PXEFile, error) {
	files := map[string]isobuilder.PXEFile{}
	for _, name := range []string{isobuilder.PXEKernel, isobuilder.PXEInitramfs, isobuilder.PXERootfs} {
		f, err := iso.PXEFile(name)
		if err != nil {
			return nil, err
		}
		files[name] = f
	}
	return files, nil
}

// Layout is what the boot configurations say.
func (s *PXESet) Layout() BootLayout { return s.layout }

// Names lists the files of the directory: the kernel, initramfs and rootfs, then the boot
// configurations in sorted order. Writing the initramfs first checks the ISO's live
// initramfs before the large files are copied.
func (s *PXESet) Names() []string {
	configs := s.layout.Configs()
	names := make([]string, 0, len(configs))
	for name := range configs {
		names = append(names, name)
	}
	slices.Sort(names)
	return append([]string{isobuilder.PXEKernel, isobuilder.PXEInitramfs, isobuilder.PXERootfs}, names...)
}

// Size is the length of the file called name, or -1 when it is only known once written
// (the customized initramfs).
func (s *PXESet) Size(name string) int64 {
	if name == isobuilder.PXEInitramfs {
		return -1
	}
	if f, ok := s.files[name]; ok {
		return int64(f.Length)
	}
	return int64(len(s.layout.Configs()[name]))
}

// Write writes the file called name to w; progress, if not nil, is told the bytes of the
// kernel and rootfs copied so far. An ISO whose live initramfs cannot be customized gives an
// *ISOError.
func (s *PXESet) Write(ctx context.Context, name string, w io.Writer, progress isobuilder.Progress) error {
	if name == isobuilder.PXEInitramfs {
		initramfs, err := s.initramfs()
		if err != nil {
			return &ISOError{Err: err}
		}
		return initramfs.writeTo(w)
	}
	if f, ok := s.files[name]; ok {
		return s.iso.CopyPXEFile(ctx, w, f, progress)
	}
	data, ok := s.layout.Configs()[name]
	if !ok {
		return fmt.Errorf("no file %s in a PXE directory", name)
	}
	_, err := w.Write(data)
	return err
}

// initramfs is the node's initramfs over the ISO's, as a server composes it.
func (s *PXESet) initramfs() (*Composed, error) {
	stock, err := InspectInitramfs(s.iso)
	if err != nil {
		return nil, err
	}
	return s.node.Initramfs(stock)
}

// BootIPXE renders the node's iPXE script for the PXE files served under baseURL.
func (n *Node) BootIPXE(iso *isobuilder.LiveISO, baseURL string) ([]byte, error) {
	kargs, err := PXEKargs(iso, n.LiveKargs)
	if err != nil {
		return nil, &ISOError{Err: err}
	}
	return BootLayout{BaseURL: baseURL, Kargs: kargs}.IPXE(), nil
}

// PXEKargs returns the live kernel arguments of a network boot of iso: the ISO's own (what
// its boot menus pass), with ignition.firstboot and ignition.platform.id=metal where an old
// ISO lacks them, edited by the node's live kargs as an ISO's are, and without
// coreos.liveiso=, which would make the initramfs wait for the ISO volume.
func PXEKargs(iso *isobuilder.LiveISO, edits coreos.LiveKargs) ([]string, error) {
	current, err := iso.CurrentKargs()
	if err != nil && !errors.Is(err, embed.ErrNoKargs) {
		return nil, err
	}
	base := strings.Fields(current)
	if !slices.Contains(base, "ignition.firstboot") {
		base = append(base, "ignition.firstboot")
	}
	if !slices.ContainsFunc(base, func(k string) bool { return strings.HasPrefix(k, "ignition.platform.id=") }) {
		base = append(base, "ignition.platform.id=metal")
	}
	edited, err := applyLiveKargs(strings.Join(base, " "), edits)
	if err != nil {
		return nil, err
	}
	var kargs []string
	for _, k := range strings.Fields(edited) {
		if name, _, _ := strings.Cut(k, "="); name != "coreos.liveiso" {
			kargs = append(kargs, k)
		}
	}
	return kargs, nil
}

// ErrKargsNotInInitramfs says that live kernel arguments were asked of a customized
// initramfs alone: they live in the boot configuration that loads it.
var ErrKargsNotInInitramfs = errors.New("live kernel arguments are not part of an initramfs: put them in the PXE boot configuration")

// InitramfsImage is the node's PXE initramfs made from stock, a stock CoreOS live initramfs of
// size bytes that is not customized yet (an ISO's images/pxeboot/initrd.img, or the one a PXE
// server keeps): its bytes unchanged, then the node's payload as an archive of its own. It is
// what `pxe build` writes as initrd.img for the node over an ISO with that initramfs, as an
// image over stock for the sinks (stock is read once here, to check it, then by the sink).
func (n *Node) InitramfsImage(stock io.ReaderAt, size int64) (*isobuilder.Image, error) {
	if !n.LiveKargs.IsZero() {
		return nil, ErrKargsNotInInitramfs
	}
	features, err := isobuilder.InspectInitramfs(io.NewSectionReader(stock, 0, size))
	if err != nil {
		return nil, err
	}
	appendix, err := isobuilder.InitramfsAppendix(features, n.Payload)
	if err != nil {
		return nil, err
	}
	return isobuilder.NewImage(stock, size+int64(len(appendix)), isobuilder.Patch{Offset: size, Data: appendix})
}
