package serve

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/s3test"
	"github.com/sno-iso/sno-iso/origin"
)

// s3Replica configures a harness to read the ISO from the store's bucket with the AWS SDK's
// default chain (the environment the test sets).
func s3Replica(st *s3test.Store, isoURL string) func(*testSetup) {
	return func(c *testSetup) {
		c.ISO = isoURL
		c.Origin = origin.Options{RootCAs: st.CAPool, S3: origin.S3Options{Endpoint: st.Endpoint, Region: s3test.Region, PathStyle: true}}
	}
}

// A real S3 store (SeaweedFS over TLS): the same ISO from a file and from s3:// gives every
// artifact the same validators; wrong credentials and a store that is down at start leave
// serve alive and not ready, with the reason, until they are put right.
func TestS3Origin(t *testing.T) {
	st := s3test.Start(t)
	st.CreateBucket(t, "rhcos", false)
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	st.Put(t, "rhcos", "rhcos-live.iso", fixtures.Bytes(t, "embed-areas-2023-07.x86_64.iso"))
	const isoURL = "s3://rhcos/rhcos-live.iso"

	// Wrong keys first: not ready, saying so; then the right ones in the environment, which
	// the next attempt reads.
	st.Setenv(t, st.Wrong)
	nodes := map[string]string{"a": configA}
	byS3 := newHarness(t, iso, nodes, s3Replica(st, isoURL))
	byS3.checkNotServing("access denied")
	st.Setenv(t, st.ReadOnly)
	byS3.waitReady()

	paths := []string{"/a.iso", "/a/vmlinuz", "/a/rootfs.img", "/rootfs.img"}
	file := newHarness(t, iso, nil, func(c *testSetup) { c.NodesDir = byS3.nodes })
	for _, p := range paths {
		want, _ := file.get(p, "Range: bytes=0-0")
		got, _ := byS3.get(p, "Range: bytes=0-0")
		if got.StatusCode != http.StatusPartialContent || got.Header.Get("ETag") != want.Header.Get("ETag") ||
			got.Header.Get("Last-Modified") != want.Header.Get("Last-Modified") {
			t.Errorf("%s from s3://: %d, ETag %q, Last-Modified %q; from the file: ETag %q, Last-Modified %q", p, got.StatusCode,
				got.Header.Get("ETag"), got.Header.Get("Last-Modified"), want.Header.Get("ETag"), want.Header.Get("Last-Modified"))
		}
	}
	if resp, body := byS3.get("/a.iso"); resp.StatusCode != http.StatusOK || string(body) != string(byS3.want(configA)) {
		t.Errorf("GET /a.iso from s3://: %d, %d bytes that are not the built ISO", resp.StatusCode, len(body))
	}

	// The store down when a replica starts: alive, not ready, ready once the store is back.
	st.Stop()
	late := newHarness(t, iso, nil, func(c *testSetup) {
		s3Replica(st, isoURL)(c)
		c.NodesDir = byS3.nodes
	})
	late.checkNotServing("not open yet")
	st.Restart(t)
	late.waitReady()
	if resp, _ := late.get("/a.iso", "Range: bytes=0-0"); resp.StatusCode != http.StatusPartialContent {
		t.Errorf("once the store is back: %d", resp.StatusCode)
	}

	// No region anywhere: a mistake that no waiting fixes is refused at start.
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	if _, err := New(Config{ISO: isoURL, NodesDir: t.TempDir(), Open: true}); !errors.Is(err, origin.ErrNoRegion) {
		t.Errorf("s3:// without a region: %v, want ErrNoRegion", err)
	}
}

// TestS3WrongRegionAtStart: a bucket in another region than the one serve signs for is a
// mistake only a redeploy fixes: New fails, naming the bucket's region, after one request.
func TestS3WrongRegionAtStart(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	endpoint, requests := s3test.WrongRegion(t, "eu-west-1")
	_, err := New(Config{ISO: "s3://rhcos/rhcos-live.iso", NodesDir: t.TempDir(), Open: true,
		Origin: origin.Options{S3: origin.S3Options{Endpoint: endpoint, Region: "us-east-1", PathStyle: true}}})
	if !errors.Is(err, origin.ErrWrongRegion) || !strings.Contains(err.Error(), "eu-west-1") {
		t.Fatalf("New with the bucket in eu-west-1, signing for us-east-1: %v, want ErrWrongRegion naming eu-west-1", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1: the answer cannot change", n)
	}
}
