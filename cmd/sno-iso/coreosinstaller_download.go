package main

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/sno-iso/sno-iso/download"
	"github.com/sno-iso/sno-iso/internal/redact"
	"github.com/ulikunitz/xz"
	"github.com/urfave/cli/v2"
)

// dropInDownloadCommand is coreos-installer's download, with its options and defaults, done
// by sno-iso's download: the stream's sha256 checked while streaming, resumed, cached.
func dropInDownloadCommand() *cli.Command {
	return &cli.Command{
		Name:  "download",
		Usage: "Download a CoreOS image",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "stream", Aliases: []string{"s"}, Value: "stable", Usage: "Fedora CoreOS stream `name`"},
			&cli.StringFlag{Name: "architecture", Aliases: []string{"a"}, Value: download.MachineArch(), Usage: "Target CPU architecture `name`"},
			&cli.StringFlag{Name: "platform", Aliases: []string{"p"}, Value: "metal", Usage: "Fedora CoreOS platform `name` (sno-iso: metal only)"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "raw.xz", Usage: "Image format `name` (iso, pxe, raw.xz, ...)"},
			&cli.StringFlag{Name: "image-url", Aliases: []string{"u"}, Usage: "Manually specify the image `URL` (refused: sno-iso needs its " +
				"sha256)"},
			&cli.StringFlag{Name: "directory", Aliases: []string{"C"}, Value: ".", Usage: "Destination directory `path`"},
			&cli.BoolFlag{Name: "decompress", Aliases: []string{"d"}, Usage: "Decompress image and don't save signature"},
			&cli.BoolFlag{Name: "insecure", Usage: "Allow unsigned image (sno-iso checks the stream's sha256, never signatures)"},
			&cli.StringFlag{Name: "stream-base-url", Usage: "Base `URL` for Fedora CoreOS stream metadata"},
			&cli.StringFlag{Name: "fetch-retries", Value: "0", Usage: "Fetch retries, or \"infinite\" (`N`)"},
			&cli.StringFlag{Name: "cache-dir", Usage: "sno-iso: keep downloads in `DIR`", DefaultText: defaultCacheDirText()},
			&cli.StringFlag{Name: "max-size", Value: "8GiB", Usage: "sno-iso: refuse a download without a declared length beyond `SIZE`"},
		},
		Action: dropInDownload,
	}
}

func dropInDownload(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("download takes no arguments, got %q", c.Args().Slice())
	}
	if c.IsSet("image-url") {
		return usagef("-u/--image-url names a file without its sha256, which sno-iso checks every download against; "+
			"run sno-iso download --url %s --sha256 HEX (or --sha256sum-url URL), or coreos-installer itself", redact.URL(c.String("image-url")))
	}
	if p := c.String("platform"); p != "metal" {
		return usagef("--platform %q: sno-iso downloads only metal images (iso, pxe, raw.xz); run coreos-installer itself for %s", p, p)
	}
	source, err := dropInStreamSource(c.String("stream"), c.String("stream-base-url"))
	if err != nil {
		return err
	}
	d, err := newDownloader(c)
	if err != nil {
		return err
	}
	artifacts, err := streamArtifacts(c, d.cache.Fetcher, source, c.String("architecture"), c.String("format"))
	if err != nil {
		return err
	}
	dir := c.String("directory")
	var written []string
	for _, a := range artifacts {
		p, err := d.get(c, a)
		if err != nil {
			return err
		}
		dest, err := placeDownload(c, a, p, dir)
		if err != nil {
			return err
		}
		written = append(written, dest)
	}
	printWritten(c, dir, written)
	return nil
}

// dropInStreamSource is the stream metadata of the stream name: NAME.json under base, as
// coreos-installer resolves it (a relative reference: a base without a trailing slash loses
// its last segment), or sno-iso's own lookup of a Fedora CoreOS name without base.
func dropInStreamSource(name, base string) (string, error) {
	if base == "" {
		return name, nil
	}
	b, err := url.Parse(base)
	if err != nil || (b.Scheme != "http" && b.Scheme != "https") || b.Host == "" {
		return "", usagef("--stream-base-url %q is not an absolute http(s) URL", base)
	}
	ref, err := url.Parse(url.PathEscape(name) + ".json")
	if err != nil {
		return "", usagef("--stream %q is not a stream name", name)
	}
	return b.ResolveReference(ref).String(), nil
}

// placeDownload puts the cached file p of a into dir, decompressed with --decompress, and
// returns its path. A file already there with the same bytes is kept, as coreos-installer
// keeps an image that verifies; any other is refused.
func placeDownload(c *cli.Context, a download.Artifact, p, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := filepath.Base(p)
	if c.Bool("decompress") {
		if base, ok := decompressedName(name); ok {
			return decompressInto(c, p, filepath.Join(dir, base))
		}
	}
	dest := filepath.Join(dir, name)
	if same, err := fileHasSHA256(dest, a.SHA256); err == nil && same {
		return dest, nil
	}
	if err := refuseExisting(dest, false, nil); err != nil {
		return "", existsAdvice(c, err)
	}
	return dest, copyArtifact(c, p, dest)
}

// decompressedName is name without the compression suffix that --decompress undoes.
func decompressedName(name string) (string, bool) {
	for _, suffix := range []string{".xz", ".gz"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && base != "" {
			return base, true
		}
	}
	return name, false
}

// decompressInto writes the decompressed src to dest through a temporary file beside it,
// so that a failure leaves no partial image.
func decompressInto(c *cli.Context, src, dest string) (string, error) {
	if err := refuseExisting(dest, false, nil); err != nil {
		return "", existsAdvice(c, err)
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	var r io.Reader
	if strings.HasSuffix(src, ".xz") {
		r, err = xz.NewReader(in)
	} else {
		r, err = gzip.NewReader(in)
	}
	if err != nil {
		return "", fmt.Errorf("decompressing %s: %w", src, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, contextReader{c, r}); err != nil {
		tmp.Close()
		return "", fmt.Errorf("decompressing %s: %w", src, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	// Link, not rename: a file that appeared meanwhile is not replaced.
	if err := os.Link(tmp.Name(), dest); err != nil {
		return "", existsAdvice(c, err)
	}
	return dest, nil
}

// contextReader stops reading once the command is interrupted.
type contextReader struct {
	c *cli.Context
	r io.Reader
}

func (r contextReader) Read(p []byte) (int, error) {
	if err := r.c.Context.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// fileHasSHA256 reports whether the file at path has the sha256 digest want (hex).
func fileHasSHA256(path, want string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, err
	}
	return strings.EqualFold(hex.EncodeToString(h.Sum(nil)), want), nil
}
