// Command mkimage writes the sno-iso container image as an OCI archive, without a container
// daemon: an image from scratch per platform whose one layer holds the static binary as
// /usr/bin/sno-iso, run as a non-root user, under one index named localhost/sno-iso:VERSION
// that podman and skopeo resolve to the platform they run on. Timestamps are fixed, so the
// same binaries give the same archive.
//
//	go run ./scripts/mkimage -o dist/sno-iso-image.oci.tar -version V -revision C \
//		linux/amd64=dist/sno-iso-V-linux-amd64 linux/arm64=dist/sno-iso-V-linux-arm64
//
// make image runs it on the binaries of make release.
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	binaryPath = "usr/bin/sno-iso"
	// nonRootUser is the numeric user and group the image runs as: no /etc/passwd is needed
	// for a number, and 65532 is outside the ranges distributions give to real accounts.
	nonRootUser = "65532:65532"
	workDir     = "/work"
	// cacheHome is XDG_CACHE_HOME in the image: the user has no home directory, and
	// deploy/kubernetes mounts a writable volume on /tmp under a read-only root filesystem.
	cacheHome = "/tmp/.cache"
)

// epoch is the time every file and the image claim, so that rebuilding changes no byte.
var epoch = time.Unix(0, 0).UTC()

// metadata is what the image says about the sno-iso it holds.
type metadata struct {
	version, revision string
}

func (m metadata) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "sno-iso",
		"org.opencontainers.image.description": "make Single Node OpenShift boot media from a CoreOS live ISO",
		"org.opencontainers.image.version":     m.version,
		"org.opencontainers.image.revision":    m.revision,
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.source":      "https://github.com/sno-iso/sno-iso",
	}
}

// rootfs is the layer's tar: the binary, and the working and temporary directories that a
// program running as nonRootUser needs to be able to write.
func rootfs(binary []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	entries := []struct {
		hdr  tar.Header
		data []byte
	}{
		{hdr: tar.Header{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777}},
		{hdr: tar.Header{Name: "usr/", Typeflag: tar.TypeDir, Mode: 0o755}},
		{hdr: tar.Header{Name: "usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755}},
		{hdr: tar.Header{Name: binaryPath, Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(binary))}, data: binary},
		{hdr: tar.Header{Name: strings.TrimPrefix(workDir, "/") + "/", Typeflag: tar.TypeDir, Mode: 0o755, Uid: 65532, Gid: 65532}},
	}
	for _, e := range entries {
		e.hdr.ModTime = epoch
		e.hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(&e.hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// image is the OCI image of binary for platform.
func image(platform v1.Platform, binary []byte, m metadata) (v1.Image, error) {
	tarData, err := rootfs(binary)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarData)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "sno-iso scripts/mkimage", Comment: "the static sno-iso binary"},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = platform.OS, platform.Architecture, platform.Variant
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		Entrypoint: []string{"sno-iso"},
		Env:        []string{"PATH=/usr/bin", "XDG_CACHE_HOME=" + cacheHome},
		User:       nonRootUser,
		WorkingDir: workDir,
		Labels:     m.labels(),
	}
	return mutate.ConfigFile(img, cf)
}

// elfMachines are the ELF machines of the architectures an image may be made for.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkStaticLinux refuses a binary that would not run in an image from scratch for goarch:
// not a Linux executable of that architecture, or one that needs a dynamic loader.
func checkStaticLinux(binary []byte, goarch string) error {
	want, ok := elfMachines[goarch]
	if !ok {
		return fmt.Errorf("no image for architecture %s", goarch)
	}
	f, err := elf.NewFile(bytes.NewReader(binary))
	if err != nil {
		return fmt.Errorf("not a Linux executable: %w", err)
	}
	if f.Machine != want {
		return fmt.Errorf("built for %v, not %s", f.Machine, goarch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("dynamically linked; an image from scratch has no loader (build with CGO_ENABLED=0)")
		}
	}
	return nil
}

// index holds one image per platform, each given as GOOS/GOARCH=BINARY.
func index(binaries []string, m metadata) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arg := range binaries {
		target, path, ok := strings.Cut(arg, "=")
		goos, goarch, ok2 := strings.Cut(target, "/")
		if !ok || !ok2 {
			return nil, fmt.Errorf("%q is not GOOS/GOARCH=BINARY", arg)
		}
		binary, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := checkStaticLinux(binary, goarch); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		platform := v1.Platform{OS: goos, Architecture: goarch}
		if goarch == "arm64" {
			platform.Variant = "v8" // what podman and the registries expect for arm64
		}
		img, err := image(platform, binary, m)
		if err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	}
	return idx, nil
}

// imageName is the name the image is loaded under: podman load names an OCI archive's image
// after its reference name, qualified with localhost/ when it has no registry.
func imageName(version string) string { return "localhost/sno-iso:" + version }

// writeArchive writes idx as an OCI archive (an OCI image layout in a tar) at path, under
// the reference name refName, through a temporary file renamed into place.
func writeArchive(path, refName string, idx v1.ImageIndex) error {
	dir, err := os.MkdirTemp("", "sno-iso-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, mutate.IndexMediaType(empty.Index, types.OCIImageIndex))
	if err != nil {
		return err
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": refName})); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".sno-iso-image-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tarDir(tmp, dir); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// tarDir writes the files below dir to w in lexical order, with fixed owners and times.
func tarDir(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		name, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(name), ModTime: epoch, Format: tar.FormatPAX, Mode: 0o644}
		if d.IsDir() {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
			return tw.WriteHeader(hdr)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func main() {
	out := flag.String("o", "dist/sno-iso-image.oci.tar", "write the OCI archive to `FILE`")
	version := flag.String("version", "", "the sno-iso `VERSION` the binaries report (label, and the tag of localhost/sno-iso)")
	revision := flag.String("revision", "", "the source `COMMIT` (label)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: mkimage -version V -revision C [-o FILE] GOOS/GOARCH=BINARY...")
		flag.PrintDefaults()
	}
	flag.Parse()
	log.SetFlags(0)
	if *version == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	idx, err := index(flag.Args(), metadata{version: *version, revision: *revision})
	if err != nil {
		log.Fatal(err)
	}
	if err := writeArchive(*out, imageName(*version), idx); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Wrote %s: %s for %s\n", *out, imageName(*version), strings.Join(flag.Args(), ", "))
}
