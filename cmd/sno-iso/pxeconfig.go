package main

import (
	"fmt"
	"net/url"
	"strings"
)

// The names of the network-boot files in a `pxe build` directory.
const (
	pxeKernel    = "vmlinuz"
	pxeInitramfs = "initrd.img"
	pxeRootfs    = "rootfs.img"
)

// The boot configurations `pxe build` writes, relative to its directory.
const (
	ipxeConfig     = "boot.ipxe"
	pxelinuxConfig = "pxelinux.cfg/default"
	grubConfig     = "grub.cfg"
)

const bootConfigHeader = "Single Node OpenShift live boot, written by sno-iso pxe build."

// bootLayout is what every boot configuration says: where the files are and which kernel
// arguments the live system gets.
type bootLayout struct {
	// BaseURL is the http(s) URL of the directory, without a trailing slash. Empty means
	// that the loaders fetch the files relative to where they found their configuration,
	// and the rootfs is loaded as a second initrd instead of through coreos.live.rootfs_url.
	BaseURL string
	// Kargs are the live kernel arguments, without the rootfs URL.
	Kargs []string
}

// parseBaseURL checks --base-url: an absolute http or https URL that file names can be
// appended to.
func parseBaseURL(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return "", usagef("--base-url %q contains whitespace or control characters", s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", usagef("--base-url %q is not a URL: %v", s, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", usagef("--base-url %q must start with http:// or https://: the live system fetches the rootfs over HTTP", s)
	case u.Host == "":
		return "", usagef("--base-url %q has no host", s)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return "", usagef("--base-url %q must be a plain directory URL, without user, query or fragment: file names are appended to it", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// url is where a loader that speaks HTTP finds name.
func (b bootLayout) url(name string) string { return b.BaseURL + "/" + name }

// kargs returns the kernel arguments, with the rootfs URL when there is a base URL.
func (b bootLayout) kargs() []string {
	if b.BaseURL == "" {
		return b.Kargs
	}
	return append(append([]string(nil), b.Kargs...), "coreos.live.rootfs_url="+b.url(pxeRootfs))
}

// ipxe renders boot.ipxe. iPXE resolves relative names against the script's own URL, so
// without a base URL the script works wherever it is chained from. The initrd= arguments
// name the images for the kernel's EFI stub; a BIOS boot ignores them.
func (b bootLayout) ipxe() []byte {
	var s strings.Builder
	fmt.Fprintf(&s, "#!ipxe\n# %s\n", bootConfigHeader)
	if b.BaseURL == "" {
		fmt.Fprintf(&s, "kernel %s initrd=main initrd=rootfs %s\n", pxeKernel, strings.Join(b.kargs(), " "))
		fmt.Fprintf(&s, "initrd --name main %s\n", pxeInitramfs)
		fmt.Fprintf(&s, "initrd --name rootfs %s\n", pxeRootfs)
	} else {
		fmt.Fprintf(&s, "kernel %s initrd=main %s\n", b.url(pxeKernel), strings.Join(b.kargs(), " "))
		fmt.Fprintf(&s, "initrd --name main %s\n", b.url(pxeInitramfs))
	}
	s.WriteString("boot\n")
	return []byte(s.String())
}

// pxelinux renders pxelinux.cfg/default. PXELINUX reads relative names by TFTP from the
// directory it was loaded from, and HTTP URLs only as lpxelinux.0 and never https: with an
// https base URL the kernel and initramfs still come by TFTP.
func (b bootLayout) pxelinux() []byte {
	kernel, initrds := pxeKernel, pxeInitramfs+","+pxeRootfs
	if b.BaseURL != "" {
		initrds = pxeInitramfs
		if strings.HasPrefix(b.BaseURL, "http://") {
			kernel, initrds = b.url(pxeKernel), b.url(pxeInitramfs)
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
func (b bootLayout) grub() []byte {
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

// bootConfigs returns each boot configuration by its path in the directory.
func (b bootLayout) bootConfigs() map[string][]byte {
	return map[string][]byte{
		ipxeConfig:     b.ipxe(),
		pxelinuxConfig: b.pxelinux(),
		grubConfig:     b.grub(),
	}
}
