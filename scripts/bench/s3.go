//go:build linux

package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sno-iso/sno-iso/internal/nginx"
	"github.com/sno-iso/sno-iso/internal/s3test"
	"github.com/sno-iso/sno-iso/origin"
)

// s3Clients is how many whole downloads run at once in the S3 measurement.
const s3Clients = 4

// s3Store is where the S3 case keeps the base ISO: the local SeaweedFS, or a bucket named by
// -s3-object and reached with the credentials, endpoint and CA in the environment.
type s3Store struct {
	name           string // for the table
	object         string // s3://BUCKET/KEY
	bucket, key    string
	uploadEnv      []string // the environment download --upload gets; nil: this process's
	serveEnv       []string // and serve's
	client         *s3.Client
	pathStyleFlags []string
}

// localS3Store starts SeaweedFS on loopback over TLS (internal/s3test), with a bucket for the
// ISO: upload with its read-write keys, serve with the read-only ones.
func localS3Store() *s3Store {
	bin, err := s3test.Build()
	if err != nil {
		fmt.Printf("| S3 measurements skipped: the SeaweedFS store could not be built: %v | | | |\n", err)
		return nil
	}
	store, err := s3test.Launch(bin)
	if err != nil {
		fatal(err)
	}
	stopAtEnd(func() {
		store.Stop()
		store.Remove()
	})
	const bucket, key = "bench", "rhcos/rhcos-live.iso"
	_, err = store.Client(store.ReadWrite).CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	if err != nil {
		fatal(err)
	}
	return &s3Store{name: "SeaweedFS over TLS on loopback", object: "s3://" + bucket + "/" + key, bucket: bucket, key: key,
		uploadEnv: store.Env(store.ReadWrite), serveEnv: store.Env(store.ReadOnly), client: store.Client(store.ReadOnly),
		pathStyleFlags: []string{"--s3-path-style"}}
}

// outsideS3Store is the bucket object names (s3://BUCKET/KEY), reached as sno-iso reaches it:
// AWS_ENDPOINT_URL_S3, AWS_REGION, the credential chain and AWS_CA_BUNDLE from the environment.
func outsideS3Store(object string, pathStyle bool) *s3Store {
	bucket, key, err := origin.ParseS3URL(object)
	if err != nil {
		fatal(err)
	}
	client, err := origin.NewS3Client(context.Background(), origin.Options{S3: origin.S3Options{PathStyle: pathStyle}})
	if err != nil {
		fatal(err)
	}
	s := &s3Store{name: "the store at " + cmp.Or(os.Getenv("AWS_ENDPOINT_URL_S3"), "AWS S3"), object: object,
		bucket: bucket, key: key, client: client}
	if pathStyle {
		s.pathStyleFlags = []string{"--s3-path-style"}
	}
	return s
}

// benchS3 measures a replica whose base ISO is in an S3 bucket: 4 concurrent whole downloads
// of a node's ISO from `sno-iso serve --iso s3://...` against nginx sending the same ISO
// prebuilt by `sno-iso build`, alternating in each round. The ISO is put in the store by
// `sno-iso download --upload`. Two replicas serve it: one as deployed, which serves from its
// local copy of the base ISO once made (the first downloads run while it is made), and one
// with the copy turned off, which streams every response's spans from the store. A third
// case reads the base ISO straight from the store with the SDK: the most any reader of the
// store gets. It reports the bytes each replica read from the store per download and its
// peak RSS, and prints rows of the table main prints.
func benchS3(sno, iso, config, tmp string, rounds int, outside string, pathStyle bool) {
	if nginx.Binary() == "" {
		fmt.Printf("| S3 measurements skipped: %v | | | |\n", nginx.ErrNotInstalled)
		return
	}
	defer stopStarted()
	store := localS3Store
	if outside != "" {
		store = func() *s3Store { return outsideS3Store(outside, pathStyle) }
	}
	st := store()
	if st == nil {
		return
	}
	peer, www, nodes := fleetFiles(sno, iso, config, filepath.Join(tmp, "s3"))
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer.Port)
	setenv(st.uploadEnv)
	execute(sno, "download", "--url", peerURL+"/rhcos-live.iso", "--sha256", fileSHA256(iso),
		"--cache-dir", filepath.Join(tmp, "s3", "cache"), "--upload", st.object)
	setenv(st.serveEnv)
	copyDir := filepath.Join(tmp, "s3", "copy")
	if err := os.MkdirAll(copyDir, 0o700); err != nil {
		fatal(err)
	}
	copying, copyBase := startServer(sno, st.object, nodes, append([]string{"--iso-copy-dir", copyDir}, st.pathStyleFlags...)...)
	peerISO, copyISO := peerURL+"/sno.iso", servedISOURL(sno, nodes, copyBase)
	want := fileSHA256(filepath.Join(www, "sno.iso"))
	check := func(u string) {
		h := sha256.New()
		download(u, h)
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
			fatalf("%s is not what sno-iso build wrote", u)
		}
	}
	check(peerISO)
	// The first downloads, while the replica copies the base ISO: each reads the store.
	first := timed(func() { downloadConcurrently(copyISO, s3Clients) })
	copiedFirst := metric(copyBase, "sno_iso_origin_copy_complete") == 1
	waitCopied(copyBase, 15*time.Minute)
	check(copyISO)

	streaming, streamBase := startServer(sno, st.object, nodes, append([]string{"--iso-copy-dir", "none"}, st.pathStyleFlags...)...)
	streamISO := servedISOURL(sno, nodes, streamBase)
	check(streamISO)
	streamBefore := metric(streamBase, "sno_iso_origin_bytes_total")

	size, err := os.Stat(filepath.Join(www, "sno.iso"))
	if err != nil {
		fatal(err)
	}
	getObject := func() {
		// Like serve, no checksum of the whole body: only the transfer is measured.
		out, err := st.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(st.key)},
			func(o *s3.Options) { o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired })
		if err != nil {
			fatal(err)
		}
		defer out.Body.Close()
		if _, err := io.Copy(io.Discard, out.Body); err != nil {
			fatal(err)
		}
	}
	peerCase := &fleetCase{url: peerISO}
	copyCase := &fleetCase{url: copyISO, pid: copying.Process.Pid}
	streamCase := &fleetCase{url: streamISO, pid: streaming.Process.Pid}
	storeCase := &fleetCase{}
	cases := []*fleetCase{peerCase, copyCase, streamCase, storeCase}
	for round := range rounds {
		for i := range cases {
			c := cases[(round+i)%len(cases)]
			if c == storeCase {
				r, cpu := timedCPU(peer.Pid(), 0, func() { concurrently(s3Clients, getObject) })
				c.runs, c.cpu = append(c.runs, r), append(c.cpu, cpu)
				continue
			}
			r, cpu := timedCPU(peer.Pid(), c.pid, func() { downloadConcurrently(c.url, s3Clients) })
			c.runs, c.cpu = append(c.runs, r), append(c.cpu, cpu)
		}
		for _, c := range cases[1:] {
			c.ratios = append(c.ratios, ratio(c.runs[round], peerCase.runs[round]))
		}
	}
	isoSize := float64(size.Size())
	// Every download the copying replica answered: the first ones, the checks, the rounds.
	copyDownloads := float64(s3Clients + 1 + s3Clients*rounds)
	copyRead := metric(copyBase, "sno_iso_origin_bytes_total") / copyDownloads / isoSize
	streamRead := (metric(streamBase, "sno_iso_origin_bytes_total") - streamBefore) / float64(s3Clients*rounds) / isoSize
	total := float64(s3Clients) * isoSize
	gbps := func(r run) float64 { return total / r.wall.Seconds() / 1e9 }
	p, c, s, o := median(peerCase.runs), median(copyCase.runs), median(streamCase.runs), median(storeCase.runs)
	fmt.Printf("| nginx: %d concurrent downloads of the node's %d MiB ISO prebuilt by `sno-iso build` (%.2f GB/s in all) | %v | 1.00 | |\n",
		s3Clients, size.Size()>>20, gbps(p), p.wall.Round(time.Millisecond))
	fmt.Printf("| `sno-iso serve --iso s3://...`, base ISO in %s, served from the replica's copy of it: the same %d downloads "+
		"(%.2f GB/s; %.3f ISO sizes read from the store per download, over all %.0f it answered) | %v | %s vs nginx | %d MiB |\n",
		st.name, s3Clients, gbps(c), copyRead, copyDownloads, c.wall.Round(time.Millisecond), ratioRange(copyCase.ratios),
		peakRSS(copying.Process.Pid)>>10)
	during := "while it copied the base ISO"
	if copiedFirst {
		during = "started while it copied the base ISO, which was done before they ended"
	}
	fmt.Printf("| the same replica's first %d downloads, %s (once, before the rounds) | %v | %.2f vs nginx's median | |\n",
		s3Clients, during, first.wall.Round(time.Millisecond), first.wall.Seconds()/p.wall.Seconds())
	fmt.Printf("| `sno-iso serve --iso s3://... --iso-copy-dir none`: every response streamed from the store (%.2f GB/s; "+
		"%.3f ISO sizes read from the store per download) | %v | %s vs nginx | %d MiB |\n",
		gbps(s), streamRead, s.wall.Round(time.Millisecond), ratioRange(streamCase.ratios), peakRSS(streaming.Process.Pid)>>10)
	fmt.Printf("| the store alone: %d concurrent GetObject of the base ISO, signed by the AWS SDK, no serve (%.2f GB/s): "+
		"the floor of streaming from this store | %v | %s vs nginx | |\n",
		s3Clients, gbps(o), o.wall.Round(time.Millisecond), ratioRange(storeCase.ratios))
	gib := total / (1 << 30)
	cv, sv, so := medianSplit(copyCase.cpu), medianSplit(streamCase.cpu), medianSplit(storeCase.cpu)
	fmt.Printf("\nCPU time per GiB delivered, medians of the rounds (the store's own is not counted): serve from its copy %v, "+
		"serve streaming from the store %v, their clients %v and %v; the SDK's GetObjects straight from the store %v.\n",
		perGiB(cv.between, gib), perGiB(sv.between, gib), perGiB(cv.clients, gib), perGiB(sv.clients, gib), perGiB(so.clients, gib))
}

// waitCopied waits until the replica at base serves from its local copy of the base ISO.
func waitCopied(base string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for metric(base, "sno_iso_origin_copy_complete") != 1 {
		if time.Now().After(deadline) {
			fatalf("%s has not finished its copy of the base ISO in %s", base, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// setenv sets this process's environment variables from NAME=VALUE pairs, for the commands
// it starts.
func setenv(vars []string) {
	for _, kv := range vars {
		name, value, _ := strings.Cut(kv, "=")
		if err := os.Setenv(name, value); err != nil {
			fatal(err)
		}
	}
}
