package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/origin"
	"github.com/urfave/cli/v2"
)

// originFlags reach an ISO named by URL (--iso of serve, build and pxe build, download's
// --url): an S3 store's endpoint, region and addressing, and the CA of a private store or web
// server. Credentials come from the AWS SDK's default chain, never from a flag.
func originFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "s3-endpoint", Usage: "reach s3:// URLs at the store at `URL` (Ceph RGW, MinIO, SeaweedFS...; default: " +
			"AWS_ENDPOINT_URL_S3, else AWS)"},
		&cli.StringFlag{Name: "s3-region", Usage: "sign s3:// requests for `REGION` (default: AWS_REGION or the profile's; us-east-1 with " +
			"--s3-endpoint)"},
		&cli.BoolFlag{Name: "s3-path-style", Usage: "address s3:// buckets in the path (https://HOST/BUCKET/KEY), as most on-premises " +
			"stores need"},
		&cli.StringFlag{Name: "ca-file", Usage: "trust the CA certificates in PEM `FILE`, instead of the system's roots, for an " +
			"https:// or s3:// ISO's server (for s3://, AWS_CA_BUNDLE also replaces the system's roots; with --ca-file both are trusted)"},
	}
}

// originOptions is what originFlags say, for origin.Open.
func originOptions(c *cli.Context) (origin.Options, error) {
	opts := origin.Options{S3: origin.S3Options{
		Endpoint: c.String("s3-endpoint"), Region: c.String("s3-region"), PathStyle: c.Bool("s3-path-style"),
	}}
	if e := opts.S3.Endpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return opts, usagef("--s3-endpoint wants the store's http(s)://HOST[:PORT] URL, got %q", e)
		}
	}
	if caFile := c.String("ca-file"); caFile != "" {
		pemData, err := input.ReadFile(caFile, maxCAFile, "a PEM CA certificate")
		if err != nil {
			return opts, fmt.Errorf("--ca-file: %w", err)
		}
		opts.RootCAs = x509.NewCertPool()
		if !opts.RootCAs.AppendCertsFromPEM(pemData) {
			return opts, fmt.Errorf("--ca-file: %s holds no PEM certificate", caFile)
		}
	}
	return opts, nil
}

// openOriginISO opens the live ISO at an http(s) or s3:// URL for a command that reads it
// once: read by ranges through a bounded cache, never downloaded whole, and the version
// opened pinned, so that a replaced object fails the command instead of mixing versions.
func openOriginISO(c *cli.Context, name string) (*isobuilder.LiveISO, error) {
	opts, err := originOptions(c)
	if err != nil {
		return nil, err
	}
	obj, err := origin.Open(c.Context, name, opts)
	if err != nil {
		return nil, certificateAdvice(err)
	}
	var r io.ReaderAt = obj
	if sum := obj.SHA256(); sum != "" {
		// A command that reads every byte (build of a full ISO) checks them against the
		// sha256 that `download --upload` recorded.
		r = origin.NewDigestReader(obj, obj.Size(), obj.String(), sum)
	}
	iso, err := isobuilder.OpenReader(r, obj.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", obj, err)
	}
	return iso, nil
}

// certificateAdvice names --ca-file when the origin's certificate could not be verified.
func certificateAdvice(err error) error {
	var verify *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	if errors.As(err, &verify) || errors.As(err, &unknownCA) {
		return fmt.Errorf("%w; if the server's certificate is signed by a private CA, give that CA with --ca-file FILE", err)
	}
	return err
}
