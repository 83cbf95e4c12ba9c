package node

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/sno-iso/sno-iso/isobuilder"
)

// The boot configurations of a node's PXE directory, relative to it.
const (
	IPXEConfig     = "boot.ipxe"
	PXELinuxConfig = "pxelinux.cfg/default"
	GRUBConfig     = "grub.cfg"
)

// The network-boot files, named as in the ISO.
const (
	pxeKernel    = isobuilder.PXEKernel
	pxeInitramfs = isobuilder.PXEInitramfs
	pxeRootfs    = isobuilder.PXERootfs
)

const bootConfigHeader = "Single Node OpenShift live boot, written by sno-iso pxe build."

// BootLayout is what every boot configuration says: where the files are and which kernel
// arguments the live system gets.
type BootLayout struct {
	// BaseURL is the http(s) URL of the directory, without a trailing slash. Empty means
	// that the loaders fetch the files relative to where they found their configuration,
	// and the rootfs is loaded as a second initrd instead of through coreos.live.rootfs_url.
	BaseURL string
	// Kargs are the live kernel arguments, without the rootfs URL.
	Kargs []string
}

// URL is where a loader that speaks HTTP finds name.
func (b BootLayout) URL(name string) string { return b.BaseURL + "/" + name }

// kargs returns the kernel arguments, with the rootfs URL when there is a base URL.
func (b BootLayout) kargs() []string {
	if b.BaseURL == "" {
		return b.Kargs
	}
	return append(append([]string(nil), b.Kargs...), "coreos.live.rootfs_url="+b.URL(pxeRootfs))
}

// IPXE renders boot.ipxe. iPXE resolves relative names against the script's own URL, so
// without a base URL the script works wherever it is chained from. The initrd= arguments
// name the images for the kernel's EFI stub; a BIOS boot ignores them.
func (b BootLayout) IPXE() []byte {
	var s strings.Builder
	fmt.Fprintf(&s, "#!ipxe\n# %s\n", bootConfigHeader)
	if b.BaseURL == "" {
		fmt.Fprintf(&s, "kernel %s initrd=main initrd=rootfs %s\n", pxeKernel, strings.Join(b.kargs(), " "))
		fmt.Fprintf(&s, "initrd --name main %s\n", pxeInitramfs)
		fmt.Fprintf(&s, "initrd --name rootfs %s\n", pxeRootfs)
	} else {
		fmt.Fprintf(&s, "kernel %s initrd=main %s\n", b.URL(pxeKernel), strings.Join(b.kargs(), " "))
		fmt.Fprintf(&s, "initrd --name main %s\n", b.URL(pxeInitramfs))
	}
	s.WriteString("boot\n")
	return []byte(s.String())
}

// pxelinux renders pxelinux.cfg/default. PXELINUX reads relative names by TFTP from the
// directory it was loaded from, and HTTP URLs only as lpxelinux.0 and never https: with an
// https base URL the kernel and initramfs still come by TFTP.
func (b BootLayout) pxelinux() []byte {
	kernel, initrds := pxeKernel, pxeInitramfs+","+pxeRootfs
	if b.BaseURL != "" {
		initrds = pxeInitramfs
		if strings.HasPrefix(b.BaseURL, "http://") {
			kernel, initrds = b.URL(pxeKernel), b.URL(pxeInitramfs)
		}
	}
	var s strings.Builder
	fmt.Fprintf(&s, "# %s\n", bootConfigHeader)
	s.WriteString("DEFAULT sno\nPROMPT 0\nTIMEOUT 0\n\nLABEL sno\n")
	fmt.Fprintf(&s, "  KERNEL %s\n", kernel)
	fmt.Fprintf(&s, "  APPEND initrd=%s %s\n", initrds, strings.Join(b.kargs(), " "))
	// BOOTIF= tells the initramfs which interface the machine booted from.
	s.WriteString("  IPAPPEND 2\n")
	return []byte(s.String())
}

// grub renders grub.cfg. GRUB reads relative names from the directory of this file
// ($config_directory: the TFTP directory it was loaded from) and HTTP as (http,HOST)/PATH,
// never https: with an https base URL the kernel and initramfs still come by TFTP.
func (b BootLayout) grub() []byte {
	local := func(name string) string { return "${config_directory}/" + name }
	kernel, initrds := local(pxeKernel), local(pxeInitramfs)+" "+local(pxeRootfs)
	if b.BaseURL != "" {
		initrds = local(pxeInitramfs)
		if u, err := url.Parse(b.BaseURL); err == nil && u.Scheme == "http" {
			remote := func(name string) string { return "(http," + u.Host + ")" + u.EscapedPath() + "/" + name }
			kernel, initrds = remote(pxeKernel), remote(pxeInitramfs)
		}
	}
	kargs := make([]string, 0, len(b.kargs()))
	for _, k := range b.kargs() {
		kargs = append(kargs, grubQuote(k))
	}
	var s strings.Builder
	fmt.Fprintf(&s, "# %s\n", bootConfigHeader)
	s.WriteString("set default=0\nset timeout=5\n\nmenuentry 'Single Node OpenShift (RHCOS live)' {\n")
	fmt.Fprintf(&s, "\tlinux %s %s\n", kernel, strings.Join(kargs, " "))
	fmt.Fprintf(&s, "\tinitrd %s\n", initrds)
	s.WriteString("}\n")
	return []byte(s.String())
}

// grubQuote quotes a word for GRUB's shell-like parser when it holds anything but the
// characters kernel arguments usually consist of.
func grubQuote(word string) string {
	safe := func(r rune) bool {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("._,:/=@+-%", r)
	}
	if strings.IndexFunc(word, func(r rune) bool { return !safe(r) }) < 0 {
		return word
	}
	return "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
}

// Configs returns each boot configuration by its path in the directory.
func (b BootLayout) Configs() map[string][]byte {
	return map[string][]byte{
		IPXEConfig:     b.IPXE(),
		PXELinuxConfig: b.pxelinux(),
		GRUBConfig:     b.grub(),
	}
}
