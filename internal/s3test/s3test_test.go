package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// TestStoreOverTLS stores an object with the read-write keys and reads it back over TLS
// with the read-only keys; the read-only keys cannot write and unknown keys cannot read.
func TestStoreOverTLS(t *testing.T) {
	s := Start(t)
	s.CreateBucket(t, "smoke", false)
	data := make([]byte, 5<<20+123) // more than one filer chunk
	rand.Read(data)
	if obj := s.Put(t, "smoke", "dir/object.bin", data); obj.ETag == "" {
		t.Error("PutObject answered without an ETag")
	}
	if got := s.Get(t, s.ReadOnly, "smoke", "dir/object.bin"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes that differ from the %d stored", len(got), len(data))
	}

	ctx := context.Background()
	bucket, key := "smoke", "other"
	_, err := s.Client(s.ReadOnly).PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: strings.NewReader("x")})
	assertAPIError(t, "read-only keys writing", err, http.StatusForbidden)
	_, err = s.Client(s.Wrong).GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("dir/object.bin")})
	assertAPIError(t, "unknown keys reading", err, http.StatusForbidden)

	// A client that does not trust the test's CA fails the handshake.
	plain := *s
	plain.CAPool = nil
	if _, err := plain.Client(s.ReadWrite).GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("dir/object.bin")}); err == nil {
		t.Error("a client without the store's CA read the object")
	}
}

func assertAPIError(t *testing.T, what string, err error, status int) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("%s: want an S3 error with status %d, got %v", what, status, err)
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) && re.HTTPStatusCode() != status {
		t.Errorf("%s: status %d (%s), want %d", what, re.HTTPStatusCode(), apiErr.ErrorCode(), status)
	}
}
