package download

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/sno-iso/sno-iso/internal/s3test"
)

// uploadFile writes n pseudo-random bytes to a file and returns its path, bytes and sha256.
func uploadFile(t *testing.T, n int, seed byte) (string, []byte, string) {
	t.Helper()
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7+int(seed)) ^ byte(i>>9)
	}
	path := filepath.Join(t.TempDir(), "rhcos-live.x86_64.iso")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return path, data, hex.EncodeToString(sum[:])
}

// openFile opens path for an upload.
func openFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// unfinished lists the keys of the bucket's multipart uploads that were never completed.
func unfinished(t *testing.T, c *s3.Client, bucket string) []string {
	t.Helper()
	out, err := c.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key))
	}
	return keys
}

// objectKeys lists the bucket's objects.
func objectKeys(t *testing.T, c *s3.Client, bucket string) []string {
	t.Helper()
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

// TestUploadToS3 runs the uploads against one real store (starting one takes seconds), each
// subtest in a bucket of its own.
func TestUploadToS3(t *testing.T) {
	store := s3test.Start(t)
	t.Run("multipart with sha256, the same skipped", func(t *testing.T) { uploadMultipartAndSkip(t, store) })
	t.Run("a killed run's parts aborted, a running one's not", func(t *testing.T) { uploadAbortsKilledRunsParts(t, store) })
	t.Run("refused, nothing left", func(t *testing.T) { uploadRefusedLeavesNothing(t, store) })
	t.Run("other bytes than the digest, aborted", func(t *testing.T) { uploadOfChangedFileAborted(t, store) })
	t.Run("no checksum unless the client asks", func(t *testing.T) { uploadFollowsClientsChecksumChoice(t, store) })
	t.Run("multipart progress rises to the size", func(t *testing.T) { uploadProgressRises(t, store) })
}

func uploadMultipartAndSkip(t *testing.T, store *s3test.Store) {
	store.CreateBucket(t, "mirror", false)
	c := store.Client(store.ReadWrite)
	path, data, digest := uploadFile(t, 13<<20+17, 1)
	u := &Uploader{Client: c, PartSize: 5 << 20}
	ctx := context.Background()

	done, err := u.Upload(ctx, openFile(t, path), strings.ToUpper(digest), "mirror", "rhcos/live.iso")
	if err != nil {
		t.Fatal(err)
	}
	if done.Skipped {
		t.Fatal("first upload was skipped")
	}
	if got := store.Get(t, store.ReadOnly, "mirror", "rhcos/live.iso"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, not the %d uploaded", len(got), len(data))
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("mirror"), Key: aws.String("rhcos/live.iso")})
	if err != nil {
		t.Fatal(err)
	}
	if got := head.Metadata[SHA256Metadata]; got != digest {
		t.Errorf("x-amz-meta-sha256 = %q, want %q", got, digest)
	}
	// A multipart object's ETag is the parts' MD5s' MD5 with "-COUNT": three 5 MiB parts.
	if etag := aws.ToString(head.ETag); !strings.HasSuffix(etag, `-3"`) {
		t.Errorf("ETag %s is not that of a 3-part upload", etag)
	}

	again, err := u.Upload(ctx, openFile(t, path), digest, "mirror", "rhcos/live.iso")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Skipped {
		t.Error("the second upload of the same file was not skipped")
	}

	// The same name with other bytes is uploaded again.
	other, otherData, otherDigest := uploadFile(t, 1<<20, 2)
	if done, err := u.Upload(ctx, openFile(t, other), otherDigest, "mirror", "rhcos/live.iso"); err != nil || done.Skipped {
		t.Fatalf("upload of other bytes: %+v, %v", done, err)
	}
	if got := store.Get(t, store.ReadOnly, "mirror", "rhcos/live.iso"); !bytes.Equal(got, otherData) {
		t.Fatal("the object does not hold the second file")
	}
	if keys := objectKeys(t, c, "mirror"); len(keys) != 1 {
		t.Errorf("bucket holds %q, want the one object", keys)
	}
}

func uploadAbortsKilledRunsParts(t *testing.T, store *s3test.Store) {
	store.CreateBucket(t, "killed", false)
	c := store.Client(store.ReadWrite)
	ctx := context.Background()
	path, data, digest := uploadFile(t, 11<<20, 3)
	// What a run killed mid-upload leaves: a multipart upload with a part, no object. One to
	// a longer key under the same prefix is another upload's, and stays.
	for _, key := range []string{"live.iso", "live.iso.other"} {
		mu, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("killed"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("killed"), Key: aws.String(key), UploadId: mu.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader(data[:5<<20])})
		if err != nil {
			t.Fatal(err)
		}
	}

	// Just initiated, the upload to live.iso may be another run's still going: left alone.
	done, err := (&Uploader{Client: c, PartSize: 5 << 20}).Upload(ctx, openFile(t, path), digest, "killed", "live.iso")
	if err != nil {
		t.Fatal(err)
	}
	if done.Abandoned != 0 || done.Running != 1 {
		t.Errorf("aborted %d and left %d unfinished uploads, want the 1 to live.iso left alone", done.Abandoned, done.Running)
	}
	if keys := unfinished(t, c, "killed"); !slices.Equal(keys, []string{"live.iso", "live.iso.other"}) {
		t.Errorf("unfinished uploads left: %q, want live.iso's and live.iso.other's", keys)
	}
	if got := store.Get(t, store.ReadOnly, "killed", "live.iso"); !bytes.Equal(got, data) {
		t.Fatal("read back other bytes than uploaded")
	}

	// A day and more later (the store's own Initiated times, a clock run ahead), it is a
	// killed run's, and aborted. The object is there: delete it so the upload is not skipped.
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("killed"), Key: aws.String("live.iso")}); err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(StaleUpload + time.Hour) }
	done, err = (&Uploader{Client: c, PartSize: 5 << 20, now: later}).Upload(ctx, openFile(t, path), digest, "killed", "live.iso")
	if err != nil {
		t.Fatal(err)
	}
	if done.Abandoned != 1 || done.Running != 0 {
		t.Errorf("aborted %d and left %d unfinished uploads, want the 1 to live.iso aborted", done.Abandoned, done.Running)
	}
	if keys := unfinished(t, c, "killed"); !slices.Equal(keys, []string{"live.iso.other"}) {
		t.Errorf("unfinished uploads left: %q, want only live.iso.other's", keys)
	}
	if got := store.Get(t, store.ReadOnly, "killed", "live.iso"); !bytes.Equal(got, data) {
		t.Fatal("read back other bytes than uploaded")
	}
}

// The age rule: older than StaleUpload is stale; a store that gives no time is not.
func TestStaleUpload(t *testing.T) {
	now := time.Date(2026, 12, 3, 15, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		initiated *time.Time
		want      bool
	}{
		{nil, false},
		{aws.Time(now), false},
		{aws.Time(now.Add(-StaleUpload)), false},
		{aws.Time(now.Add(-StaleUpload - time.Second)), true},
		{aws.Time(now.Add(time.Hour)), false}, // the store's clock ahead of ours
	} {
		if got := stale(tc.initiated, now); got != tc.want {
			t.Errorf("stale(%v) = %v, want %v", tc.initiated, got, tc.want)
		}
	}
}

func uploadRefusedLeavesNothing(t *testing.T, store *s3test.Store) {
	store.CreateBucket(t, "refused", false)
	path, _, digest := uploadFile(t, 11<<20, 4)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		keys   s3test.Keys
		bucket string
		codes  []string
	}{
		{"unknown keys", store.Wrong, "refused", []string{"InvalidAccessKeyId"}},
		{"read-only keys", store.ReadOnly, "refused", []string{"AccessDenied"}},
		{"no such bucket", store.ReadWrite, "nonesuch", []string{"NoSuchBucket"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&Uploader{Client: store.Client(tc.keys), PartSize: 5 << 20}).Upload(ctx, openFile(t, path), digest, tc.bucket, "live.iso")
			var s3err *S3Error
			if !errors.As(err, &s3err) {
				t.Fatalf("error %v (%T) is not an *S3Error", err, err)
			}
			var api smithy.APIError
			if !errors.As(err, &api) || !slices.Contains(tc.codes, api.ErrorCode()) {
				t.Errorf("error %v: want S3 code %q", err, tc.codes)
			}
			if strings.Contains(err.Error(), tc.keys.SecretAccessKey) {
				t.Errorf("error shows the secret key: %v", err)
			}
		})
	}
	rw := store.Client(store.ReadWrite)
	if keys := objectKeys(t, rw, "refused"); len(keys) != 0 {
		t.Errorf("refused uploads left objects %q", keys)
	}
	if keys := unfinished(t, rw, "refused"); len(keys) != 0 {
		t.Errorf("refused uploads left unfinished uploads to %q", keys)
	}
}

// A file whose bytes are not the digest it is uploaded with (changed since it was checked)
// never becomes the object: neither a single PUT nor a multipart upload, which is aborted.
func uploadOfChangedFileAborted(t *testing.T, store *s3test.Store) {
	store.CreateBucket(t, "changed", false)
	c := store.Client(store.ReadWrite)
	for _, size := range []int{1 << 20, 11 << 20} {
		path, _, _ := uploadFile(t, size, 6)
		_, _, checked := uploadFile(t, size, 7)
		_, err := (&Uploader{Client: c, PartSize: 5 << 20}).Upload(context.Background(), openFile(t, path), checked, "changed", "live.iso")
		var changed *ChangedError
		if !errors.As(err, &changed) || changed.Path != path || changed.Want != checked {
			t.Fatalf("%d bytes: got %v, want a *ChangedError naming %s", size, err, path)
		}
	}
	if keys := objectKeys(t, c, "changed"); len(keys) != 0 {
		t.Errorf("the changed file became objects %q", keys)
	}
	if keys := unfinished(t, c, "changed"); len(keys) != 0 {
		t.Errorf("the changed file left unfinished uploads to %q", keys)
	}
}

// updates records what a Progress hears. It takes no lock of its own: the race detector
// then reports any two calls that the uploader lets overlap.
type updates struct {
	silent
	total int64
	seen  []int64
}

func (u *updates) Start(_ string, _, total int64) { u.total = total }
func (u *updates) Update(have int64)              { u.seen = append(u.seen, have) }

func uploadProgressRises(t *testing.T, store *s3test.Store) {
	store.CreateBucket(t, "progress", false)
	path, _, digest := uploadFile(t, 16<<20+5, 5)
	heard := &updates{}
	u := &Uploader{Client: store.Client(store.ReadWrite), PartSize: 5 << 20, Concurrency: 4, Progress: heard}
	if _, err := u.Upload(context.Background(), openFile(t, path), digest, "progress", "live.iso"); err != nil {
		t.Fatal(err)
	}
	const size = 16<<20 + 5
	if heard.total != size {
		t.Errorf("Start heard a total of %d, want %d", heard.total, size)
	}
	// Parts finish in any order: a late count below one already heard is dropped, so there
	// may be fewer updates than parts, but never none.
	if len(heard.seen) == 0 {
		t.Fatal("heard no update of a 4-part upload")
	}
	for i := 1; i < len(heard.seen); i++ {
		if heard.seen[i] < heard.seen[i-1] {
			t.Fatalf("update %d fell from %d to %d: %v", i, heard.seen[i-1], heard.seen[i], heard.seen)
		}
	}
	if last := heard.seen[len(heard.seen)-1]; last != size {
		t.Errorf("last update %d, want the size %d: %v", last, size, heard.seen)
	}
	// Summing the running totals reaches the size after the first parts: no update may
	// claim the whole file before the last part was sent.
	if n := slices.Index(heard.seen, size); n != len(heard.seen)-1 {
		t.Errorf("update %d of %d already claimed the whole file: %v", n+1, len(heard.seen), heard.seen)
	}
}

// headerRecorder is an S3 client's HTTP client that keeps the headers of every request.
type headerRecorder struct {
	next s3.HTTPClient
	mu   sync.Mutex
	sent []http.Header
}

func (h *headerRecorder) Do(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.sent = append(h.sent, r.Header.Clone())
	h.mu.Unlock()
	return h.next.Do(r)
}

// A client that computes checksums only when required (origin.NewS3Client's, for on-prem
// stores that refuse the SDK's CRC32 trailers) uploads without one, single or multipart,
// though the transfer manager would add CRC32 on its own.
func uploadFollowsClientsChecksumChoice(t *testing.T, store *s3test.Store) {
	store.CreateBucket(t, "nocrc", false)
	rec := &headerRecorder{}
	c := s3.New(store.Client(store.ReadWrite).Options(), func(o *s3.Options) {
		rec.next = o.HTTPClient
		o.HTTPClient = rec
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	})
	for _, size := range []int{1 << 20, 11 << 20} {
		path, data, digest := uploadFile(t, size, 8)
		u := &Uploader{Client: c, PartSize: 5 << 20}
		if _, err := u.Upload(context.Background(), openFile(t, path), digest, "nocrc", "live.iso"); err != nil {
			t.Fatal(err)
		}
		if got := store.Get(t, store.ReadOnly, "nocrc", "live.iso"); !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back other bytes", size)
		}
	}
	if len(rec.sent) < 6 {
		t.Fatalf("recorded %d requests, want those of a PUT and a multipart upload", len(rec.sent))
	}
	for _, h := range rec.sent {
		for name := range h {
			if strings.HasPrefix(strings.ToLower(name), "x-amz-checksum") || strings.EqualFold(name, "X-Amz-Trailer") ||
				strings.EqualFold(name, "X-Amz-Sdk-Checksum-Algorithm") {
				t.Errorf("a request sent %s: %q", name, h.Values(name))
			}
		}
	}
}
