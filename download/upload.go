package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// SHA256Metadata is the user metadata key under which an uploaded object records the sha256
// of its bytes, in lower-case hex: S3 carries it as the x-amz-meta-sha256 header. A reader of
// the whole object compares what it read with it.
const SHA256Metadata = "sha256"

// S3Client is what an upload asks of an S3 client; *s3.Client has it.
type S3Client interface {
	transfermanager.S3APIClient
	ListMultipartUploads(context.Context, *s3.ListMultipartUploadsInput, ...func(*s3.Options)) (*s3.ListMultipartUploadsOutput, error)
}

// Uploader puts verified files into an S3 bucket: in one PUT when small, else as a multipart
// upload, which S3 makes visible under its key only once complete.
type Uploader struct {
	Client S3Client
	// PartSize and Concurrency tune multipart uploads; zero takes the transfer manager's.
	PartSize    int64
	Concurrency int
	// Progress hears Start and Update of each upload; nil is silence.
	Progress Progress

	// now is the clock that ages unfinished uploads; nil is time.Now.
	now func() time.Time
}

// StaleUpload is the age after which an unfinished multipart upload to the key being
// uploaded is taken for one whose run was killed, and aborted. A younger one may belong to a
// run still going (another machine uploading the same file) and is left alone: aborting it
// would fail that run. A day is far beyond any upload's length and any clock skew.
const StaleUpload = 24 * time.Hour

// stale reports whether an unfinished upload initiated at the time is older than
// StaleUpload at now. A store that does not say when is taken at its word: not stale.
func stale(initiated *time.Time, now time.Time) bool {
	return initiated != nil && now.Sub(*initiated) > StaleUpload
}

// Uploaded says what Upload did with a file.
type Uploaded struct {
	// Skipped is true when the object was already there with the file's size and sha256.
	Skipped bool
	// Abandoned counts the unfinished multipart uploads to the key that were aborted first:
	// those older than StaleUpload, of an earlier run that was killed.
	Abandoned int
	// Running counts the younger unfinished multipart uploads to the key, left alone: they
	// may be other runs' still going.
	Running int
}

// Upload puts the file, whose bytes have the sha256 digest, into bucket under key, with the
// digest as its SHA256Metadata. An object already there with the same size and digest is
// left alone. Unfinished multipart uploads to the key older than StaleUpload are aborted
// first, so that a run after a killed one leaves no parts behind; a failed upload aborts its
// own. The bytes are hashed
// as they are sent: when they do not have the digest (the file changed since it was checked)
// the upload is aborted, never completed, and the error is a *ChangedError.
func (u *Uploader) Upload(ctx context.Context, file *os.File, digest, bucket, key string) (Uploaded, error) {
	var done Uploaded
	digest = strings.ToLower(digest)
	if !IsSHA256(digest) {
		return done, fmt.Errorf("%q is not a sha256 digest (64 hex digits)", digest)
	}
	st, err := file.Stat()
	if err != nil {
		return done, err
	}
	fail := func(op string, err error) error { return &S3Error{Op: op, Bucket: bucket, Key: key, Err: err} }
	// Keys that may write but not read (a mirror's uploader) see 403 for HEAD: the upload
	// goes ahead unchecked, and keys the store refuses are named by the PUT's answer.
	same, err := u.holds(ctx, bucket, key, st.Size(), digest)
	readable := httpStatus(err) != http.StatusForbidden
	if err != nil && readable {
		return done, fail("HEAD", err)
	}
	if same {
		done.Skipped = true
		return done, nil
	}
	if done.Abandoned, done.Running, err = u.abortUnfinished(ctx, bucket, key); err != nil && httpStatus(err) != http.StatusForbidden {
		return done, err
	}
	tm := transfermanager.New(u.Client, func(o *transfermanager.Options) {
		if u.PartSize > 0 {
			o.PartSizeBytes = u.PartSize
			o.MultipartUploadThreshold = u.PartSize
		}
		if u.Concurrency > 0 {
			o.Concurrency = u.Concurrency
		}
		// Unless told, the transfer manager adds a CRC32 to every upload whatever the client
		// says; it follows the client's choice (origin.NewS3Client's: only when required).
		if c, ok := u.Client.(*s3.Client); ok {
			o.RequestChecksumCalculation = c.Options().RequestChecksumCalculation
		}
		o.ObjectProgressListeners.Register(&uploadListener{progress: u.progress(), size: st.Size()})
	})
	u.progress().Start(fmt.Sprintf("s3://%s/%s", bucket, key), 0, st.Size())
	// One byte past the size: a file that grew is read past it, and refused.
	body := &checkedReader{r: io.NewSectionReader(file, 0, st.Size()+1), path: file.Name(), size: st.Size(), want: digest,
		hash: sha256.New()}
	_, err = tm.UploadObject(ctx, &transfermanager.UploadObjectInput{
		Bucket:        aws.String(bucket),
		Key:           aws.String(key),
		Body:          body,
		ContentLength: aws.Int64(st.Size()),
		ContentType:   aws.String("application/octet-stream"),
		Metadata:      map[string]string{SHA256Metadata: digest},
	})
	if changed := (*ChangedError)(nil); errors.As(err, &changed) {
		return done, changed
	}
	if err != nil {
		return done, fail("PUT", err)
	}
	if !readable {
		return done, nil
	}
	// Another upload to the key may have completed after ours: say so rather than claim it.
	if same, err = u.holds(ctx, bucket, key, st.Size(), digest); err != nil {
		return done, fail("HEAD", err)
	}
	if !same {
		return done, fail("HEAD", ErrReplaced)
	}
	return done, nil
}

// ChangedError is a file whose bytes, read for an upload, are not those it was checked to
// have: the upload was aborted.
type ChangedError struct {
	Path      string
	Want, Got string
	// Size and Read are the size the file had when the upload started and the bytes read.
	Size, Read int64
}

func (e *ChangedError) Error() string {
	if e.Read != e.Size {
		return fmt.Sprintf("%s changed while it was uploaded (%d bytes read, not %d): upload aborted", e.Path, e.Read, e.Size)
	}
	return fmt.Sprintf("%s no longer has sha256 %s (its bytes have %s): upload aborted", e.Path, e.Want, e.Got)
}

// checkedReader reads the file to upload from its start once, in order (as the transfer manager reads its
// Body: parts are buffered, and retried from the buffers), and in place of the end of the
// file returns a *ChangedError when what it read is not size bytes with the digest want: the
// transfer manager then aborts the upload instead of completing it.
type checkedReader struct {
	r          io.Reader
	path, want string
	size, read int64
	hash       hash.Hash
}

func (c *checkedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.hash.Write(p[:n])
	c.read += int64(n)
	if err == io.EOF {
		if got := hex.EncodeToString(c.hash.Sum(nil)); c.read != c.size || got != c.want {
			return n, &ChangedError{Path: c.path, Want: c.want, Got: got, Size: c.size, Read: c.read}
		}
	}
	return n, err
}

// ErrReplaced is an object that no longer holds what was just uploaded: another writer
// replaced it at once.
var ErrReplaced = errors.New("the object was replaced by another writer right after the upload")

// holds reports whether bucket/key is an object of size bytes with the digest as its
// SHA256Metadata.
func (u *Uploader) holds(ctx context.Context, bucket, key string, size int64, digest string) (bool, error) {
	out, err := u.Client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		// HEAD has no body: a missing key and a missing bucket both answer 404. The upload
		// that follows names which.
		if httpStatus(err) == http.StatusNotFound {
			return false, nil
		}
		return false, err
	}
	return aws.ToInt64(out.ContentLength) == size && out.Metadata[SHA256Metadata] == digest, nil
}

// abortUnfinished aborts the multipart uploads to exactly bucket/key that were started more
// than StaleUpload ago and never completed, and returns how many it aborted and how many
// younger ones it left alone. Keys that may not list them (403) leave them to the bucket's
// lifecycle rules.
func (u *Uploader) abortUnfinished(ctx context.Context, bucket, key string) (aborted, running int, err error) {
	now := time.Now()
	if u.now != nil {
		now = u.now()
	}
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket), Prefix: aws.String(key)}
	for {
		out, err := u.Client.ListMultipartUploads(ctx, in)
		if err != nil {
			return aborted, running, &S3Error{Op: "list the unfinished uploads of", Bucket: bucket, Key: key, Err: err}
		}
		for _, up := range out.Uploads {
			if aws.ToString(up.Key) != key { // a longer key under the same prefix
				continue
			}
			if !stale(up.Initiated, now) {
				running++
				continue
			}
			_, err := u.Client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(bucket), Key: up.Key, UploadId: up.UploadId})
			if err != nil && !isCode(err, "NoSuchUpload") {
				return aborted, running, &S3Error{Op: "abort an unfinished upload of", Bucket: bucket, Key: key, Err: err}
			}
			aborted++
		}
		if !aws.ToBool(out.IsTruncated) {
			return aborted, running, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}

func (u *Uploader) progress() Progress {
	if u.Progress == nil {
		return silent{}
	}
	return u.Progress
}

// uploadListener passes the transfer manager's byte counts to a Progress. The transfer
// manager calls it from its part uploads' goroutines, each with the running total of the
// bytes sent, which may arrive out of order: the Progress hears one call at a time and a
// count that never falls.
type uploadListener struct {
	progress Progress
	size     int64

	mu   sync.Mutex
	sent int64
}

func (l *uploadListener) OnObjectBytesTransferred(_ context.Context, e *transfermanager.ObjectBytesTransferredEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if total := min(e.BytesTransferred, l.size); total > l.sent {
		l.sent = total
		l.progress.Update(total)
	}
}

// S3Error is a request to an S3 store that failed.
type S3Error struct {
	// Op is what was asked ("PUT", "HEAD", ...) of s3://Bucket/Key.
	Op, Bucket, Key string
	Err             error
}

func (e *S3Error) Error() string {
	return fmt.Sprintf("%s s3://%s/%s: %v", e.Op, e.Bucket, e.Key, e.Err)
}

func (e *S3Error) Unwrap() error { return e.Err }

// HTTPStatus is the status of the store's answer, 0 when none came (a connection or TLS
// failure).
func (e *S3Error) HTTPStatus() int { return httpStatus(e.Err) }

// httpStatus is the HTTP status of the response an S3 error came with, 0 when none came.
func httpStatus(err error) int {
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) {
		return resp.HTTPStatusCode()
	}
	return 0
}

// isCode reports whether err is an S3 error response with the code.
func isCode(err error, code string) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == code
}
