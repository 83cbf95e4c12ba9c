package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/coreos/stream-metadata-go/stream"
	"github.com/sno-iso/sno-iso/download"
	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/internal/redact"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/origin"
	"github.com/urfave/cli/v2"
)

// maxSHA256SumsSize bounds a mirror's sha256sum.txt read into memory.
const maxSHA256SumsSize = 1 << 20

// maxKeyringSize bounds a --keyring file: Fedora's keys take a few KiB each.
const maxKeyringSize = 4 << 20

func downloadCommand() *cli.Command {
	return &cli.Command{
		Name:  "download",
		Usage: "download the live ISO or PXE files of a CoreOS stream, verified, into the cache",
		Description: "Finds the artifacts in stream metadata (--stream: what\n" +
			"`openshift-install coreos print-stream-json` prints, as a file or URL, or a Fedora CoreOS stream\n" +
			"name), or takes one --url with its sha256, and downloads them into the cache: checked against\n" +
			"their sha256 while streaming, resumed where a connection broke, retried when the server asks\n" +
			"for it. Prints the path of each file, alone, on standard output: in the cache, or in -C DIR.\n" +
			"With --upload s3://BUCKET/KEY it then puts the verified files into an S3 bucket, the sha256 as\n" +
			"their x-amz-meta-sha256 metadata, skipping an object that already holds them.",
		Flags:  downloadFlags(),
		Action: downloadArtifacts,
	}
}

// downloadFlags are download's own, the stream's, and those that reach an S3 store for
// --upload.
func downloadFlags() []cli.Flag {
	flags := append(streamFlags(),
		&cli.StringFlag{Name: "format", Value: download.FormatISO,
			Usage: "`FORMAT` to fetch: iso (the live ISO) or pxe (kernel, initramfs and rootfs)"},
		&cli.StringFlag{Name: "directory", Aliases: []string{"C"}, Usage: "also copy the files into `DIR`"},
		forceFlag("replace existing files in DIR"),
		&cli.StringFlag{Name: "url", Usage: "download `URL` instead of a stream's artifacts (a mirror's, an air-gapped server's, " +
			"or s3://BUCKET/KEY with the AWS SDK's credentials)"},
		&cli.StringFlag{Name: "sha256", Usage: "with --url: the file's sha256 `HEX` digest"},
		&cli.StringFlag{Name: "sha256sum-url", Usage: "with --url: take the digest from the sha256sum.txt at `URL`"},
		uploadFlag,
	)
	return append(flags, originFlags()...)
}

// streamFlags name a stream's artifact and how to fetch it: download's, and those of the
// commands that take --stream instead of --iso.
func streamFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "stream", Usage: "take the artifacts from the stream metadata in `SOURCE`: " +
			"a file (what openshift-install coreos print-stream-json prints), its http(s) URL, " +
			"or a Fedora CoreOS stream name (" + strings.Join(download.FedoraStreams, ", ") + "); - reads standard input"},
		&cli.StringFlag{Name: "arch", Usage: "fetch for `ARCH`: x86_64, aarch64, s390x or ppc64le", DefaultText: download.MachineArch()},
		&cli.StringFlag{Name: "cache-dir", Usage: "keep downloads in `DIR`", DefaultText: defaultCacheDirText()},
		&cli.StringFlag{Name: "keyring",
			Usage: "verify Fedora CoreOS OpenPGP signatures with the keys in `FILE` (RHCOS publishes none: its sha256 is the check)"},
		&cli.StringFlag{Name: "fetch-retries", Value: strconv.Itoa(download.NewFetcher().Retries),
			Usage: "retry a failed request up to `N` times in a row, or infinite (errors that cannot go away, such as 404, fail at once)"},
		&cli.StringFlag{Name: "max-size", Value: "8GiB",
			Usage: "refuse a download whose server declares no length beyond `SIZE` (bytes, or with KiB, MiB, GiB)"},
	}
}

func defaultCacheDirText() string {
	dir, err := download.DefaultCacheDir()
	if err != nil {
		return "the user's cache directory"
	}
	return dir
}

func downloadArtifacts(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("download takes no arguments, got %q; name the stream with --stream or the file with --url", c.Args().Slice())
	}
	format := c.String("format")
	if format != download.FormatISO && format != download.FormatPXE {
		return badValue("format", format, []string{download.FormatISO, download.FormatPXE})
	}
	if err := checkURLFlags(c); err != nil {
		return err
	}
	dir := c.String("directory")
	d, err := newDownloader(c)
	if err != nil {
		return err
	}
	if err := reachOrigin(c, d.cache.Fetcher); err != nil {
		return err
	}
	var artifacts []download.Artifact
	if c.IsSet("url") {
		artifacts, err = urlArtifact(c, d.cache.Fetcher)
	} else {
		artifacts, err = streamArtifacts(c, d.cache.Fetcher, c.String("stream"), c.String("arch"), format)
	}
	if err != nil {
		return err
	}
	var targets []uploadTarget
	if c.IsSet("upload") {
		names := make([]string, len(artifacts))
		for i, a := range artifacts {
			names[i] = a.Name()
		}
		if targets, err = uploadTargets(c.String("upload"), names); err != nil {
			return err
		}
	}
	if dir != "" && !c.Bool("force") {
		for _, a := range artifacts {
			if err := refuseExisting(filepath.Join(dir, a.Name()), false, nil); err != nil {
				return forceAdvice(err)
			}
		}
	}
	var paths []string
	for _, a := range artifacts {
		p, err := d.get(c, a)
		if err != nil {
			return err
		}
		paths = append(paths, p)
	}
	if dir != "" {
		if paths, err = copyInto(c, paths, dir); err != nil {
			return err
		}
	}
	if targets != nil {
		if err := d.upload(c, artifacts, targets); err != nil {
			return err
		}
	}
	for _, p := range paths {
		fmt.Fprintln(c.App.Writer, p)
	}
	return nil
}

// checkURLFlags rejects the combinations of --stream and --url flags that name nothing or
// two things.
func checkURLFlags(c *cli.Context) error {
	switch {
	case c.IsSet("url") && c.IsSet("stream"):
		return usagef("--url and --stream both name what to download: give one")
	case c.IsSet("url"):
		if c.IsSet("sha256") == c.IsSet("sha256sum-url") {
			return usagef("--url needs the file's digest: --sha256 HEX or --sha256sum-url URL (one of them)")
		}
		if c.IsSet("sha256") && !download.IsSHA256(c.String("sha256")) {
			return usagef("--sha256 %q is not a sha256 digest: want 64 hex digits", c.String("sha256"))
		}
		for _, name := range []string{"arch", "format"} {
			if c.IsSet(name) {
				return usagef("--%s chooses among a stream's artifacts; --url names one file", name)
			}
		}
	case c.IsSet("sha256") || c.IsSet("sha256sum-url"):
		return usagef("--sha256 and --sha256sum-url go with --url; a stream carries its own digests")
	case !c.IsSet("stream"):
		return usagef("download needs --stream SOURCE (e.g. the file `openshift-install coreos print-stream-json` writes) or --url URL")
	}
	return nil
}

// downloader fetches artifacts into the cache, drawing progress on standard error.
type downloader struct {
	cache    *download.Cache
	progress *downloadProgress
}

// newDownloader uses the cache of --cache-dir and the keys of --keyring.
func newDownloader(c *cli.Context) (*downloader, error) {
	dir := c.String("cache-dir")
	if dir == "" {
		var err error
		if dir, err = download.DefaultCacheDir(); err != nil {
			return nil, fmt.Errorf("no user cache directory (%v); name one with --cache-dir DIR", err)
		}
		// A service user without a home directory (HOME=/) cannot create ~/.cache: say how to
		// choose another place before any download starts.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create the cache directory: %w; name a writable one with --cache-dir DIR or XDG_CACHE_HOME", err)
		}
	}
	d := &downloader{progress: newDownloadProgress(c.App.ErrWriter)}
	f := download.NewFetcher()
	f.Progress = d.progress
	var err error
	if f.Retries, err = parseRetries(c.String("fetch-retries")); err != nil {
		return nil, err
	}
	if f.MaxSize, err = parseByteSize("max-size", c.String("max-size")); err != nil {
		return nil, err
	}
	d.cache = &download.Cache{Dir: dir, Fetcher: f}
	if file := c.String("keyring"); file != "" {
		data, err := input.ReadFile(file, maxKeyringSize, "an OpenPGP keyring")
		if err != nil {
			return nil, fmt.Errorf("--keyring: %w", err)
		}
		if d.cache.Keyring, err = download.ParseKeyring(data); err != nil {
			return nil, fmt.Errorf("--keyring %s: %w; give a file of OpenPGP public keys, armored or binary", file, err)
		}
	}
	return d, nil
}

// streamArtifacts loads the stream of source ("-" for standard input) and selects format for
// arch.
func streamArtifacts(c *cli.Context, f *download.Fetcher, source, arch, format string) ([]download.Artifact, error) {
	var s *stream.Stream
	var err error
	if source == "-" {
		if s, err = download.ReadStream(c.App.Reader); err != nil {
			return nil, fmt.Errorf("stream on standard input: %w", err)
		}
	} else if s, err = f.LoadStream(c.Context, source); err != nil {
		return nil, err
	}
	artifacts, err := download.Select(s, arch, format)
	var missing *download.NotInStreamError
	if errors.As(err, &missing) {
		if missing.What == download.MissingArchitecture {
			return nil, archError(missing)
		}
		return nil, fmt.Errorf("%w; sno-iso needs the metal iso or pxe artifacts: is this a CoreOS stream for bare metal?", err)
	}
	return artifacts, err
}

// urlArtifact is --url with the digest of --sha256 or of the --sha256sum-url file.
func urlArtifact(c *cli.Context, f *download.Fetcher) ([]download.Artifact, error) {
	a := download.Artifact{URL: c.String("url"), SHA256: c.String("sha256")}
	if origin.IsS3(a.URL) {
		// The key as written, escaped once for the request (reachOrigin checked it parses).
		reqURL, err := origin.S3RequestURL(a.URL)
		if err != nil {
			return nil, usagef("--url %s: %v", a.URL, err)
		}
		a.URL = reqURL
	}
	if a.Name() == "" {
		return nil, usagef("--url %s names no file: give the URL of the file itself", redact.URL(a.URL))
	}
	if c.String("keyring") != "" {
		a.SignatureURL = a.URL + ".sig" // where Fedora CoreOS publishes them
	}
	if sumsURL := c.String("sha256sum-url"); sumsURL != "" {
		data, err := f.Get(c.Context, sumsURL, maxSHA256SumsSize)
		if err != nil {
			return nil, err
		}
		sums, err := download.ParseSHA256Sums(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", redact.URL(sumsURL), err)
		}
		name := a.Name()
		digest, ok := sums[name]
		if !ok {
			return nil, fmt.Errorf("%s has no digest for %s; it lists: %s",
				redact.URL(sumsURL), name, strings.Join(slices.Sorted(maps.Keys(sums)), ", "))
		}
		a.SHA256 = digest
	}
	return []download.Artifact{a}, nil
}

// get returns the path of a in the cache, downloading it when missing, and advice with
// what went wrong.
func (d *downloader) get(c *cli.Context, a download.Artifact) (string, error) {
	p, err := d.cache.Get(c.Context, a)
	d.progress.finish()
	switch {
	case errors.Is(err, context.Canceled):
		return "", fmt.Errorf("download of %s interrupted; the next run resumes it", redact.URL(a.URL))
	case errors.Is(err, download.ErrNoSignature):
		return "", fmt.Errorf("%w; RHCOS streams publish no signatures (the sha256 from the signed installer is the check): drop --keyring", err)
	case err != nil:
		var mismatch *download.DigestMismatchError
		if errors.As(err, &mismatch) {
			return "", fmt.Errorf("%w; the download was deleted: check that the stream or digest matches the file the URL serves", err)
		}
		var status *download.StatusError
		if errors.As(err, &status) && origin.IsS3(a.URL) {
			return "", s3StatusAdvice(err, status.Status)
		}
		var tooLarge *download.TooLargeError
		if errors.As(err, &tooLarge) && !tooLarge.Declared {
			return "", fmt.Errorf("%w; the download was deleted: raise --max-size if the file is really this large", err)
		}
		return "", err
	}
	return p, nil
}

// copyInto copies the cache's files into dir, atomically and by the kernel where it can; the
// cache keeps its own read-only copy, so editing these in place leaves it intact.
func copyInto(c *cli.Context, paths []string, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		dest := filepath.Join(dir, filepath.Base(p))
		if err := copyArtifact(c, p, dest); err != nil {
			return nil, err
		}
		out = append(out, dest)
	}
	return out, nil
}

func copyArtifact(c *cli.Context, src, dest string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	img, err := isobuilder.NewImage(f, st.Size())
	if err != nil {
		return err
	}
	opts, done := progress(c, st.Size())
	defer done()
	opts.Force = c.Bool("force")
	return isobuilder.WriteFile(c.Context, img, dest, opts)
}

// reachOrigin lets f reach what originFlags say: the CA of --ca-file for https, and S3 for an
// s3:// --url, with the AWS SDK's credentials.
func reachOrigin(c *cli.Context, f *download.Fetcher) error {
	opts, err := originOptions(c)
	if err != nil {
		return err
	}
	t, ok := f.Client.Transport.(*http.Transport)
	if !ok {
		return nil
	}
	if opts.RootCAs != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12}
	}
	if !origin.IsS3(c.String("url")) {
		return nil
	}
	if _, _, err := origin.ParseS3URL(c.String("url")); err != nil {
		return usagef("--url %s: %v", c.String("url"), err)
	}
	client, err := origin.NewS3Client(c.Context, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", c.String("url"), err)
	}
	t.RegisterProtocol("s3", origin.S3RoundTripper(client))
	return nil
}

// s3StatusAdvice names what an S3 store's error status means, for errorText's advice.
func s3StatusAdvice(err error, status int) error {
	if kind := origin.S3ErrorKind(status, ""); kind != nil {
		return fmt.Errorf("%w: %w", err, kind)
	}
	return err
}
