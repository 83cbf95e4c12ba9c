package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/sno-iso/sno-iso/download"
	"github.com/sno-iso/sno-iso/origin"
	"github.com/urfave/cli/v2"
)

// uploadFlag is download's --upload flag.
var uploadFlag = &cli.StringFlag{Name: "upload",
	Usage: "after the sha256 check, put the files into the bucket at `s3://BUCKET/KEY` with their sha256 as metadata " +
		"(a KEY ending in / is a prefix the file names go under: what --format pxe needs)"}

// uploadTarget is where --upload puts one artifact.
type uploadTarget struct{ bucket, key string }

func (t uploadTarget) String() string { return "s3://" + t.bucket + "/" + t.key }

// uploadTargets places the artifacts named names under dest, --upload's s3://BUCKET/KEY:
// at KEY itself when there is one artifact, under KEY as a prefix when it ends in "/" (or
// is empty: s3://BUCKET/). Several artifacts need a prefix.
func uploadTargets(dest string, names []string) ([]uploadTarget, error) {
	prefix := strings.HasSuffix(dest, "/")
	if !prefix && len(names) > 1 {
		return nil, usagef("--upload %s names one object, but there are %d files (%s): end it with / to put them under it",
			dest, len(names), strings.Join(names, ", "))
	}
	targets := make([]uploadTarget, len(names))
	for i, name := range names {
		object := dest
		if prefix {
			object += name
		}
		bucket, key, err := origin.ParseS3URL(object)
		if err != nil {
			return nil, usagef("--upload %q: %v", dest, err)
		}
		targets[i] = uploadTarget{bucket: bucket, key: key}
	}
	return targets, nil
}

// upload puts each verified artifact into its target, saying what it did on standard error.
func (d *downloader) upload(c *cli.Context, artifacts []download.Artifact, targets []uploadTarget) error {
	opts, err := originOptions(c)
	if err != nil {
		return err
	}
	client, err := origin.NewS3Client(c.Context, opts)
	if err != nil {
		return fmt.Errorf("--upload: %w", err)
	}
	progress := d.progress.uploading()
	u := &download.Uploader{Client: client, Progress: progress}
	for i, a := range artifacts {
		done, err := d.cache.Upload(c.Context, a, u, targets[i].bucket, targets[i].key)
		progress.finish()
		if err != nil {
			return uploadAdvice(err, targets[i])
		}
		switch {
		case done.Skipped:
			fmt.Fprintf(c.App.ErrWriter, "%s already holds %s (sha256 %s): not uploaded again\n", targets[i], a.Name(), a.SHA256)
		default:
			fmt.Fprintf(c.App.ErrWriter, "Uploaded %s to %s (sha256 %s)%s\n", a.Name(), targets[i], a.SHA256, unfinishedNote(done))
		}
	}
	return nil
}

// unfinishedNote says what an upload did with the unfinished uploads to its key.
func unfinishedNote(done download.Uploaded) string {
	note := ""
	if done.Abandoned > 0 {
		note += fmt.Sprintf(", after aborting %d unfinished upload(s) to it started over %s ago", done.Abandoned, download.StaleUpload)
	}
	if done.Running > 0 {
		note += fmt.Sprintf("; left alone %d unfinished upload(s) to it started less than %s ago: another run's still going, "+
			"or a killed one's that a run after that age (or the bucket's lifecycle rule) aborts", done.Running, download.StaleUpload)
	}
	return note
}

// uploadAdvice adds to an upload's error what to do about it.
func uploadAdvice(err error, target uploadTarget) error {
	kind := origin.S3ErrorKindOf(err)
	switch {
	case errors.Is(kind, origin.ErrNoSuchBucket):
		return fmt.Errorf("%w; the bucket %s does not exist: create it, or check the name and --s3-endpoint", err, target.bucket)
	case errors.Is(kind, origin.ErrWrongRegion):
		return fmt.Errorf("%w; give the bucket's region with --s3-region or AWS_REGION", err)
	case errors.Is(kind, origin.ErrCredentialsRefused), errors.Is(kind, origin.ErrCredentialsUnavailable):
		// STS's failure to renew the credentials, not the store's answer: kind tells it whole,
		// without the SDK's chain of calls, and errorText adds its advice.
		return fmt.Errorf("--upload %s: %w", target, kind)
	case errors.Is(kind, origin.ErrBadCredentials):
		return fmt.Errorf("%w; the store does not accept these credentials: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "+
			"(or the profile, web identity or instance role the AWS SDK found)", err)
	case errors.Is(kind, origin.ErrAccessDenied):
		return fmt.Errorf("%w; these credentials may not write %s: grant them s3:PutObject (and s3:AbortMultipartUpload, "+
			"s3:ListBucketMultipartUploads) on the bucket, or use others", err, target)
	case errors.As(err, new(*download.ChangedError)):
		return fmt.Errorf("%w; the cached file changed after it was checked: remove it and download again", err)
	case errors.As(err, new(x509.UnknownAuthorityError)), errors.As(err, new(x509.HostnameError)),
		errors.As(err, new(*tls.CertificateVerificationError)):
		return fmt.Errorf("%w; the store's certificate is not trusted: give its CA with --ca-file FILE (or AWS_CA_BUNDLE)", err)
	}
	return err
}
