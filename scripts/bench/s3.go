//go:build linux

package main

import (
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
)

// s3Clients is how many whole downloads run at once in the S3 measurement.
const s3Clients = 4

// benchS3 measures a replica whose base ISO is in an S3 bucket: 4 concurrent whole downloads
// of a node's ISO from `sno-iso serve --iso s3://...` against nginx sending the same ISO
// prebuilt by `sno-iso build`, alternating in each round. The store is SeaweedFS on loopback
// over TLS (internal/s3test), the ISO put there by `sno-iso download --upload`, and serve reads
// it with read-only keys from its environment. It also reports the bytes serve read from the
// store per download and serve's peak RSS. It prints rows of the table main prints.
func benchS3(sno, iso, config, tmp string, rounds int) {
	if nginx.Binary() == "" {
		fmt.Printf("| S3 measurements skipped: %v | | | |\n", nginx.ErrNotInstalled)
		return
	}
	bin, err := s3test.Build()
	if err != nil {
		fmt.Printf("| S3 measurements skipped: the SeaweedFS store could not be built: %v | | | |\n", err)
		return
	}
	defer stopStarted()
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
	peer, www, nodes := fleetFiles(sno, iso, config, filepath.Join(tmp, "s3"))
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer.Port)
	object := "s3://" + bucket + "/" + key
	// sno-iso finds the keys, the endpoint and the CA in its environment: the read-write keys
	// to upload, the read-only ones to serve.
	setenv(store.Env(store.ReadWrite))
	execute(sno, "download", "--url", peerURL+"/rhcos-live.iso", "--sha256", fileSHA256(iso),
		"--cache-dir", filepath.Join(tmp, "s3", "cache"), "--upload", object)
	setenv(store.Env(store.ReadOnly))
	server, base := startServer(sno, object, nodes, "--s3-path-style")
	peerISO, serveISO := peerURL+"/sno.iso", servedISOURL(sno, nodes, base)
	want := fileSHA256(filepath.Join(www, "sno.iso"))
	for _, u := range []string{peerISO, serveISO} {
		h := sha256.New()
		download(u, h)
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
			fatalf("%s is not what sno-iso build wrote", u)
		}
	}
	st, err := os.Stat(filepath.Join(www, "sno.iso"))
	if err != nil {
		fatal(err)
	}
	// The store alone: the same number of whole GETs of the base ISO, signed by the SDK in this
	// process. What serve cannot beat when the store is slower than nginx.
	client := store.Client(store.ReadOnly)
	getObject := func() {
		// Like serve, no checksum of the whole body: only the transfer is measured.
		out, err := client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)},
			func(o *s3.Options) { o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired })
		if err != nil {
			fatal(err)
		}
		defer out.Body.Close()
		if _, err := io.Copy(io.Discard, out.Body); err != nil {
			fatal(err)
		}
	}
	peerCase, serveCase := &fleetCase{url: peerISO}, &fleetCase{url: serveISO, pid: server.Process.Pid}
	storeCase := &fleetCase{}
	cases := []*fleetCase{peerCase, serveCase, storeCase}
	storeBefore := metric(base, "sno_iso_origin_bytes_total")
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
		serveCase.ratios = append(serveCase.ratios, ratio(serveCase.runs[round], peerCase.runs[round]))
		storeCase.ratios = append(storeCase.ratios, ratio(storeCase.runs[round], peerCase.runs[round]))
	}
	perDownload := (metric(base, "sno_iso_origin_bytes_total") - storeBefore) / float64(s3Clients*rounds)
	total := float64(s3Clients * st.Size())
	gbps := func(r run) float64 { return total / r.wall.Seconds() / 1e9 }
	p, s, o := median(peerCase.runs), median(serveCase.runs), median(storeCase.runs)
	fmt.Printf("| nginx: %d concurrent downloads of the node's %d MiB ISO prebuilt by `sno-iso build` (%.2f GB/s in all) | %v | 1.00 | |\n",
		s3Clients, st.Size()>>20, gbps(p), p.wall.Round(time.Millisecond))
	fmt.Printf("| `sno-iso serve --iso s3://...`, base ISO in SeaweedFS over TLS: the same %d downloads (%.2f GB/s; "+
		"%.3f ISO sizes read from the store per download) | %v | %s vs nginx | %d MiB |\n",
		s3Clients, gbps(s), perDownload/float64(st.Size()), s.wall.Round(time.Millisecond), ratioRange(serveCase.ratios),
		peakRSS(server.Process.Pid)>>10)
	fmt.Printf("| SeaweedFS alone: %d concurrent GetObject of the base ISO, signed by the AWS SDK, no serve (%.2f GB/s): "+
		"the floor of serving from this store | %v | %s vs nginx | |\n",
		s3Clients, float64(s3Clients)*float64(st.Size())/o.wall.Seconds()/1e9, o.wall.Round(time.Millisecond), ratioRange(storeCase.ratios))
	gib := total / (1 << 30)
	sv, so := medianSplit(serveCase.cpu), medianSplit(storeCase.cpu)
	fmt.Printf("\nCPU time per GiB delivered, medians of the rounds (the store's own is not counted): serve %v and its clients %v; "+
		"the SDK's GetObjects straight from the store %v.\n", perGiB(sv.between, gib), perGiB(sv.clients, gib), perGiB(so.clients, gib))
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
