package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/nginx"
	"github.com/sno-iso/sno-iso/internal/s3test"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// TestFleetOnS3 is TestFleetBehindNginx with the base ISO in a real S3 store (SeaweedFS over
// TLS with the test's CA, static keys from the environment): three `serve --iso s3://...`
// replicas behind nginx (one reading every download from the store, two serving their local
// copy), 64 clients, one replica killed and the object replaced in the bucket while they run;
// no response mixes two versions of the base. A replica with keys the
// store does not know starts, says why in its log and is not ready.
func TestFleetOnS3(t *testing.T) {
	if nginx.Binary() == "" {
		testenv.Missing(t, "%v", nginx.ErrNotInstalled)
	}
	st, v1, v2, replace := s3TwoVersions(t, "fleet", "rhcos/rhcos-live.iso")

	f := fleetScenario{
		isoURL:    "s3://fleet/rhcos/rhcos-live.iso",
		serveArgs: []string{"--s3-endpoint", st.Endpoint, "--s3-path-style", "--ca-file", st.CAFile},
		// Replica 0 reads every download from the store; replicas 1 (killed mid-run) and 2
		// serve their local copy of each version once complete, and learn of the replaced
		// object at readiness probes. Every replica names the media alike either way.
		replicaArgs: [][]string{{"--iso-copy-dir", "none"}},
		a1:          buildFleetNode(t, v1, "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3", 0),
		b1:          buildFleetNode(t, v1, "/dev/disk/by-path/pci-0000:00:1f.2-ata-1", 2),
		hidden:      []string{st.ReadOnly.SecretAccessKey, st.Wrong.SecretAccessKey},
	}
	f.a2, f.b2 = f.a1.rebuild(t, v2), f.b1.rebuild(t, v2)
	f.layOutNodes(t)
	f.change = replace

	// Keys the store does not know: serve runs, not ready, and its log says why.
	st.Setenv(t, st.Wrong)
	wrong := startServe(t, append([]string{"--iso", f.isoURL, "--nodes", t.TempDir()}, f.serveArgs...)...)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(wrong.output(), "access denied") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if resp, _ := rawGet(t, wrong.url+"/readyz"); resp.StatusCode != 503 {
		t.Errorf("/readyz of a replica with unknown keys: %d, want 503", resp.StatusCode)
	}
	if out := wrong.output(); !strings.Contains(out, "access denied") || strings.Contains(out, st.Wrong.SecretAccessKey) {
		t.Errorf("the log of a replica with unknown keys does not say access denied, or shows the secret:\n%s", out)
	}
	wrong.stop(t)

	st.Setenv(t, st.ReadOnly)
	replicas := runFleet(t, &f)
	// The replica that copies served both versions from its copy; the other never copied.
	waitCopied(t, replicas[2], 2)
	got := serveMetric(t, replicas[0].url, "sno_iso_origin_copy_complete")
	if got != -1 || strings.Contains(replicas[0].output(), "local copy") {
		t.Errorf("the replica started with --iso-copy-dir none made a copy (sno_iso_origin_copy_complete %v):\n%s", got, replicas[0].output())
	}
}

// s3TwoVersions starts a store with the pristine fixture at bucket/key, and returns the
// paths of that ISO and of the version that replace puts in its place (replacedBase).
func s3TwoVersions(t *testing.T, bucket, key string) (st *s3test.Store, v1, v2 string, replace func() error) {
	t.Helper()
	v1 = fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	v2 = replacedBase(t, v1)
	st = s3test.Start(t)
	st.CreateBucket(t, bucket, false)
	base, err := os.ReadFile(v1)
	if err != nil {
		t.Fatal(err)
	}
	st.Put(t, bucket, key, base)
	next, err := os.ReadFile(v2)
	if err != nil {
		t.Fatal(err)
	}
	return st, v1, v2, func() error {
		_, err := st.Client(st.ReadWrite).PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(next), ContentLength: aws.Int64(int64(len(next))),
		})
		return err
	}
}

// replacedBase writes a copy of the pristine ISO at iso as the next release would differ: another
// root file system (of the same length), and other bytes in the free space between its files
// and its backup GPT, so that builds from the two differ over much of their length.
func replacedBase(t *testing.T, iso string) string {
	t.Helper()
	img, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	rootfs := isoFileIn(t, img, isobuilder.PXEDir+"/ROOTFS.IMG")
	copy(rootfs, bytes.Repeat([]byte("2"), len(rootfs)))
	const from, to = 256 * isobuilder.SectorSize, 496 * isobuilder.SectorSize
	if len(img) < to || bytes.ContainsFunc(img[from:to], func(r rune) bool { return r != 0 }) {
		t.Fatalf("the fixture has no free space at bytes %d-%d", from, to)
	}
	rng := rand.New(rand.NewPCG(28, 2))
	for i := from; i < to; i++ {
		img[i] = byte(rng.Uint32())
	}
	path := filepath.Join(t.TempDir(), "rhcos-live-v2.iso")
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
