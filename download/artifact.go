package download

import (
	"fmt"
	"maps"
	"net/url"
	"path"
	"runtime"
	"slices"
	"strings"
	"unicode"

	"github.com/coreos/stream-metadata-go/stream"
	"github.com/sno-iso/sno-iso/internal/redact"
)

// Artifact is one file to download and the digest it must have.
type Artifact struct {
	URL    string
	SHA256 string
	// SignatureURL is its detached OpenPGP signature; "" when the source publishes none
	// (RHCOS streams do not: the signed installer that embeds the stream vouches for it).
	SignatureURL string
}

// Name is the file name the artifact is stored under: the last element of its URL's path,
// "" when the path names no file.
func (a Artifact) Name() string {
	u, err := url.Parse(a.URL)
	if err != nil || strings.HasSuffix(u.Path, "/") {
		return ""
	}
	if name := path.Base(u.Path); name != "." && name != "/" {
		return name
	}
	return ""
}

// check rejects artifacts that cannot be fetched and verified.
func (a Artifact) check() error {
	shown := redact.URL(a.URL)
	if !isHTTPURL(a.URL) && !isS3URL(a.URL) {
		return fmt.Errorf("%s is not an http(s) or s3:// URL", shown)
	}
	if !IsSHA256(a.SHA256) {
		return fmt.Errorf("%s: %q is not a sha256 digest (64 hex digits)", shown, a.SHA256)
	}
	// Names starting with a dot are the cache's own (.lock) or no file (..); a backslash or
	// NUL could reach outside the cache on some systems.
	name := a.Name()
	if name == "" || strings.HasPrefix(name, ".") || strings.ContainsAny(name, "\\\x00") {
		return fmt.Errorf("%s: the URL names no file", shown)
	}
	// Paths are printed one per line: a line break or terminal escape would forge lines.
	if strings.ContainsFunc(name, unicode.IsControl) {
		return fmt.Errorf("%s: the file name %q holds a control character", shown, name)
	}
	return nil
}

// Formats are the artifact sets Select knows, in the order the PXE files are listed.
const (
	FormatISO = "iso"
	FormatPXE = "pxe"
)

// metalPlatform is the platform whose artifacts boot bare metal: the live ISO and PXE files.
const metalPlatform = "metal"

// Select returns the artifacts of format (FormatISO: the live ISO; FormatPXE: kernel,
// initramfs and rootfs; any other metal format, such as raw.xz: its disk image) for the
// architecture arch ("x86_64", "aarch64", ...; "" for this
// machine's). What the stream lacks is a *NotInStreamError listing what it has.
func Select(s *stream.Stream, arch, format string) ([]Artifact, error) {
	if arch == "" {
		arch = MachineArch()
	}
	a, ok := s.Architectures[arch]
	if !ok {
		return nil, &NotInStreamError{Stream: s.Stream, What: MissingArchitecture, Want: arch, Have: slices.Sorted(maps.Keys(s.Architectures))}
	}
	metal, ok := a.Artifacts[metalPlatform]
	if !ok {
		return nil, &NotInStreamError{Stream: s.Stream, What: MissingPlatform, Arch: arch, Want: metalPlatform,
			Have: slices.Sorted(maps.Keys(a.Artifacts))}
	}
	noFormat := &NotInStreamError{Stream: s.Stream, What: MissingFormat, Arch: arch, Want: format,
		Have: slices.Sorted(maps.Keys(metal.Formats))}
	var files []*stream.Artifact
	switch format {
	case FormatISO:
		iso, ok := metal.Formats["iso"]
		if !ok || iso.Disk == nil {
			return nil, noFormat
		}
		files = []*stream.Artifact{iso.Disk}
	case FormatPXE:
		pxe, ok := metal.Formats["pxe"]
		if !ok || pxe.Kernel == nil || pxe.Initramfs == nil || pxe.Rootfs == nil {
			return nil, noFormat
		}
		files = []*stream.Artifact{pxe.Kernel, pxe.Initramfs, pxe.Rootfs}
	default: // a disk image, such as raw.xz, that coreos-installer's download fetches
		disk, ok := metal.Formats[format]
		if !ok || disk.Disk == nil {
			return nil, noFormat
		}
		files = []*stream.Artifact{disk.Disk}
	}
	out := make([]Artifact, len(files))
	for i, f := range files {
		out[i] = Artifact{URL: f.Location, SHA256: strings.ToLower(f.Sha256), SignatureURL: f.Signature}
		if err := out[i].check(); err != nil {
			return nil, fmt.Errorf("stream %q, %s %s: %w", s.Stream, arch, format, err)
		}
	}
	return out, nil
}

// MachineArch is this machine's architecture as CoreOS streams name it.
func MachineArch() string {
	return StreamArch(runtime.GOARCH)
}

// StreamArch is the CoreOS streams' name for an architecture named as Go or Debian name it
// (amd64, arm64, ppc64el); other names are returned as they are.
func StreamArch(name string) string {
	switch name {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "ppc64el":
		return "ppc64le"
	default: // s390x and ppc64le are spelled alike
		return name
	}
}
