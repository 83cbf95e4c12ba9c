package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/kubevol"
	"github.com/sno-iso/sno-iso/internal/nginx"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/nodedir"
)

// startNginx runs nginx with the http block's contents that config returns for its port,
// until the test ends.
func startNginx(t *testing.T, config func(port int) string) int {
	t.Helper()
	srv, err := nginx.Start(t.TempDir(), 1, config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv.Port
}

// fleetNode is one version of a node's files and what `sno-iso build` makes of them.
type fleetNode struct {
	files map[string]string
	iso   []byte
}

func buildFleetNode(t *testing.T, iso, disk string, seed int) fleetNode {
	t.Helper()
	dir := t.TempDir()
	ign := bipConfig(t, dir, 150000+seed)
	cfg := writeFile(t, filepath.Join(dir, nodedir.ConfigFile), "coreOSInstallation:\n  installationDisk: "+disk+"\n")
	out := filepath.Join(dir, "built.iso")
	mustSno(t, nil, "build", "--iso", iso, "--ignition", ign, "--config", cfg, "-o", out)
	n := fleetNode{files: map[string]string{}}
	for _, p := range []string{ign, cfg} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n.files[filepath.Base(p)] = string(b)
	}
	var err error
	if n.iso, err = os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	return n
}

// rebuild is the node's files built into another base ISO.
func (n fleetNode) rebuild(t *testing.T, iso string) fleetNode {
	t.Helper()
	dir := t.TempDir()
	args := []string{"build", "--iso", iso, "-o", filepath.Join(dir, "built.iso")}
	for name, content := range n.files {
		flag := "--ignition"
		if name == nodedir.ConfigFile {
			flag = "--config"
		}
		args = append(args, flag, writeFile(t, filepath.Join(dir, name), content))
	}
	mustSno(t, nil, args...)
	built, err := os.ReadFile(filepath.Join(dir, "built.iso"))
	if err != nil {
		t.Fatal(err)
	}
	return fleetNode{files: n.files, iso: built}
}

// fleetClient fetches through the balancer, retrying what a killed replica breaks.
type fleetClient struct {
	t       *testing.T
	ctx     context.Context
	base    string
	client  *http.Client
	retries atomic.Int64
}

// get returns a complete answer to GET path with headers: an error, a 5xx or a body shorter
// than its Content-Length is retried, up to 5 times.
func (c *fleetClient) get(path string, headers ...string) (*http.Response, []byte, error) {
	var lastErr error
	for try := 0; try < 5; try++ {
		if try > 0 {
			c.retries.Add(1)
			time.Sleep(time.Duration(try) * 50 * time.Millisecond)
		}
		req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.base+path, nil)
		if err != nil {
			return nil, nil, err
		}
		for _, h := range headers {
			k, v, _ := strings.Cut(h, ": ")
			req.Header.Set(k, v)
		}
		resp, err := c.client.Do(req)
		if err != nil {
			lastErr = err
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case err != nil:
			lastErr = fmt.Errorf("reading %s: %w", path, err)
		case resp.StatusCode >= 500:
			lastErr = fmt.Errorf("%s: %s", path, resp.Status)
		default:
			return resp, body, nil
		}
		if c.ctx.Err() != nil {
			break
		}
	}
	return nil, nil, lastErr
}

// observation is a response to check once every version's ETag is known: data at off of
// the version that etag names.
type observation struct {
	node string
	what string
	etag string
	off  int64
	data []byte
}

// fleetScenario is a fleet's origin and what changes mid-run: the replicas read the base ISO
// at isoURL (serveArgs reach it), node a's built ISO is a1 before change and a2 after, node
// b's b1 and b2 (the same when change leaves b alone). hidden must appear in no log.
type fleetScenario struct {
	isoURL    string
	serveArgs []string
	// replicaArgs[i], when given, are replica i's own arguments besides serveArgs.
	replicaArgs [][]string
	nodes       string
	volA        *kubevol.Volume
	a1, a2      fleetNode
	b1, b2      fleetNode
	change      func() error
	hidden      []string
}

// TestFleetBehindNginx is a serve fleet (docs/fleet.md) on 127.0.0.1: nginx as the object store,
// three serve replicas reading the ISO by URL with nodes and the secret of the capability
// URLs laid out as Kubernetes Secret volumes, nginx in front as the balancer, 64 clients.
// One replica is killed and a node's Secret swapped while they run; then the URL secret is
// rotated under the replicas.
func TestFleetBehindNginx(t *testing.T) {
	if nginx.Binary() == "" {
		testenv.Missing(t, "%v", nginx.ErrNotInstalled)
	}
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	store := t.TempDir()
	if err := os.Link(iso, filepath.Join(store, "rhcos-live.iso")); err != nil {
		t.Fatal(err)
	}
	f := fleetScenario{
		a1: buildFleetNode(t, iso, "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3", 0),
		a2: buildFleetNode(t, iso, "/dev/disk/by-id/wwn-0x5000c500a0b1ffff", 1),
		b1: buildFleetNode(t, iso, "/dev/disk/by-path/pci-0000:00:1f.2-ata-1", 2),
	}
	f.b2 = f.b1
	originPort := startNginx(t, func(port int) string {
		return fmt.Sprintf("server { listen 127.0.0.1:%d; root %s; }", port, store)
	})
	f.isoURL = fmt.Sprintf("http://127.0.0.1:%d/rhcos-live.iso?X-Amz-Signature=NOTFORLOGS", originPort)
	f.hidden = []string{"NOTFORLOGS"}
	// Every download reads the origin: this fleet is about streaming from an http origin
	// under load. TestFleetOnS3 runs replicas that serve their local copy.
	f.serveArgs = []string{"--iso-copy-dir", "none"}
	f.layOutNodes(t)
	f.change = func() error { return f.volA.Update(f.a2.files) }
	runFleet(t, &f)
}

// layOutNodes writes nodes a (its first files) and b as Kubernetes Secret volumes.
func (f *fleetScenario) layOutNodes(t *testing.T) {
	t.Helper()
	f.nodes = t.TempDir()
	var err error
	if f.volA, err = kubevol.New(filepath.Join(f.nodes, "a"), f.a1.files); err != nil {
		t.Fatal(err)
	}
	if _, err := kubevol.New(filepath.Join(f.nodes, "b"), f.b1.files); err != nil {
		t.Fatal(err)
	}
}

// runFleet runs the scenario: three replicas behind nginx, 64 clients, one replica killed and
// the change made while they run, every response checked against the version its ETag names;
// then the URL secret is rotated under the replicas. It returns the replicas.
func runFleet(t *testing.T, f *fleetScenario) []*servedNode {
	a1, a2, nodes := f.a1, f.a2, f.nodes
	// The replicas share the secret of the capability URLs through a mounted Secret.
	secret, err := capability.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	secretVol, err := kubevol.New(filepath.Join(t.TempDir(), "url-secret"), map[string]string{"secret": secretText(t, secret)})
	if err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(secretVol.Dir, "secret")
	aISO, bISO := "/"+capability.Token(secret.Key, "a")+"/a.iso", "/"+capability.Token(secret.Key, "b")+"/b.iso"
	var replicas []*servedNode
	var upstreams strings.Builder
	for i := range 3 {
		args := append([]string{"--iso", f.isoURL, "--nodes", nodes, "--secret-file", secretFile, "--log-format", "json"}, f.serveArgs...)
		if i < len(f.replicaArgs) {
			args = append(args, f.replicaArgs[i]...)
		}
		r := startServe(t, args...)
		replicas = append(replicas, r)
		fmt.Fprintf(&upstreams, "server %s max_fails=1 fail_timeout=10s; ", strings.TrimPrefix(r.url, "http://"))
	}
	lbPort := startNginx(t, func(port int) string {
		return fmt.Sprintf(`upstream replicas { %s keepalive 16; }
	server {
		listen 127.0.0.1:%d;
		location / {
			proxy_pass http://replicas;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_buffering off;
			proxy_connect_timeout 2s;
			proxy_read_timeout 20s;
			proxy_next_upstream error timeout http_502 http_503;
			proxy_next_upstream_tries 3;
		}
	}`, upstreams.String(), port)
	})

	// Every replica names each node's media alike, and a download started on one resumes
	// on another.
	etagA1 := sameValidators(t, replicas, aISO)
	etagB1 := sameValidators(t, replicas, bISO)
	if _, err := os.Stat(filepath.Join(nodes, capability.SecretFileName)); err == nil {
		t.Errorf("a replica given --secret-file made a secret of its own in the nodes directory")
	}
	resumed, tail := rawGet(t, replicas[2].url+aISO, "Range: bytes=500000-", "If-Range: "+etagA1)
	if resumed.StatusCode != 206 || !bytes.Equal(tail, a1.iso[500000:]) {
		t.Errorf("resuming on another replica: %d with %d bytes", resumed.StatusCode, len(tail))
	}

	// Readiness probes, as the kubelet sends them: a replica serving its local copy of the
	// base ISO learns at them that the object changed.
	probing, stopProbes := context.WithCancel(context.Background())
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		probe := &http.Client{Timeout: 5 * time.Second}
		for probing.Err() == nil {
			for _, r := range replicas {
				if req, err := http.NewRequestWithContext(probing, http.MethodGet, r.url+"/readyz", nil); err == nil {
					if resp, err := probe.Do(req); err == nil {
						resp.Body.Close()
					}
				}
			}
			select {
			case <-probing.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	defer func() {
		stopProbes()
		<-probed
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := &fleetClient{t: t, ctx: ctx, base: fmt.Sprintf("http://127.0.0.1:%d", lbPort),
		client: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	const clients, opsPerClient = 64, 4
	var (
		done     atomic.Int64
		killOnce sync.Once
		swapOnce sync.Once
		swapped  = make(chan struct{})
		mu       sync.Mutex
		seen     []observation
		failures []string
	)
	record := func(o observation) {
		mu.Lock()
		seen = append(seen, o)
		mu.Unlock()
	}
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	size := int64(len(a1.iso))
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 17))
			for op := range opsPerClient {
				switch (i + op) % 5 {
				case 0: // a whole ISO of the node being swapped
					resp, body, err := c.get(aISO)
					if err != nil || resp.StatusCode != 200 {
						fail("GET /a.iso: %v %v", err, status(resp))
						break
					}
					record(observation{"a", "GET /a.iso", resp.Header.Get("ETag"), 0, body})
				case 1: // a whole ISO of the other node
					resp, body, err := c.get(bISO)
					if err != nil || resp.StatusCode != 200 {
						fail("GET /b.iso: %v %v", err, status(resp))
						break
					}
					record(observation{"b", "GET /b.iso", resp.Header.Get("ETag"), 0, body})
				case 2: // one range
					off := rng.Int64N(size - 1)
					n := 1 + rng.Int64N(min(size-off, 300000))
					resp, body, err := c.get(aISO, fmt.Sprintf("Range: bytes=%d-%d", off, off+n-1))
					if err != nil || resp.StatusCode != 206 || int64(len(body)) != n {
						fail("range %d+%d of /a.iso: %v %v, %d bytes", off, n, err, status(resp), len(body))
						break
					}
					record(observation{"a", "range", resp.Header.Get("ETag"), off, body})
				case 3: // several ranges, across the Ignition area
					spec := "bytes=0-2047,139000-200000,-4096"
					resp, body, err := c.get(aISO, "Range: "+spec)
					if err != nil || resp.StatusCode != 206 {
						fail("ranges of /a.iso: %v %v", err, status(resp))
						break
					}
					parts := multipartParts(resp, body)
					if len(parts) != 3 {
						fail("ranges of /a.iso: %d parts, want 3", len(parts))
					}
					for _, p := range parts {
						record(observation{"a", "multipart " + spec, resp.Header.Get("ETag"), p.off, p.data})
					}
				case 4: // conditional: revalidate and resume with the first version's ETag
					resp, body, err := c.get(aISO, "If-None-Match: "+etagA1)
					switch {
					case err != nil:
						fail("If-None-Match: %v", err)
					case resp.StatusCode == 304:
						if resp.Header.Get("ETag") != etagA1 {
							fail("304 with ETag %s, asked about %s", resp.Header.Get("ETag"), etagA1)
						}
					case resp.StatusCode == 200 && resp.Header.Get("ETag") != etagA1:
						record(observation{"a", "If-None-Match 200", resp.Header.Get("ETag"), 0, body})
					default:
						fail("If-None-Match %s: %v with ETag %s", etagA1, status(resp), header(resp, "ETag"))
					}
					off := rng.Int64N(size)
					resp, body, err = c.get(aISO, fmt.Sprintf("Range: bytes=%d-", off), "If-Range: "+etagA1)
					switch {
					case err != nil:
						fail("If-Range: %v", err)
					case resp.StatusCode == 206 && resp.Header.Get("ETag") == etagA1:
						record(observation{"a", "If-Range 206", etagA1, off, body})
					case resp.StatusCode == 200 && resp.Header.Get("ETag") != etagA1:
						record(observation{"a", "If-Range 200", resp.Header.Get("ETag"), 0, body})
					default:
						fail("If-Range %s: %v with ETag %s", etagA1, status(resp), header(resp, "ETag"))
					}
				}
				switch done.Add(1) {
				case clients * opsPerClient / 3:
					killOnce.Do(func() { replicas[1].cmd.Process.Signal(syscall.SIGKILL) })
				case clients * opsPerClient / 2:
					swapOnce.Do(func() {
						if err := f.change(); err != nil {
							fail("the change mid-run: %v", err)
						}
						close(swapped)
					})
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-swapped:
	default:
		t.Fatal("the clients did not get as far as the change")
	}
	if ctx.Err() != nil {
		t.Fatalf("the clients did not finish in time: %v", ctx.Err())
	}
	for _, f := range failures {
		t.Error(f)
	}
	// A replica learns of a change when it next reads past its cache: a whole ISO does.
	for _, r := range []*servedNode{replicas[0], replicas[2]} {
		(&fleetClient{t: t, ctx: context.Background(), base: r.url, client: c.client}).get(aISO)
	}

	// After the change every live replica serves the new version, and agrees on it.
	live := []*servedNode{replicas[0], replicas[2]}
	etagA2 := sameValidators(t, live, aISO)
	if etagA2 == etagA1 {
		t.Fatalf("the ETag of /a.iso did not change")
	}
	etagB2 := sameValidators(t, live, bISO)
	for range 6 {
		resp, body, err := c.get(aISO)
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, a2.iso) || resp.Header.Get("ETag") != etagA2 {
			t.Errorf("after the change through the balancer: %v %v, ETag %s, the new bytes: %v", err, status(resp), header(resp, "ETag"),
				bytes.Equal(body, a2.iso))
		}
	}

	// Every body is exactly one version's bytes: never a mix.
	versions := map[string]map[string][]byte{
		"a": {etagA1: a1.iso, etagA2: a2.iso},
		"b": {etagB1: f.b1.iso, etagB2: f.b2.iso},
	}
	counts := map[string]int{}
	for _, o := range seen {
		want, ok := versions[o.node][o.etag]
		switch {
		case !ok:
			t.Errorf("%s: ETag %s is neither version's", o.what, o.etag)
		case o.off < 0:
			t.Errorf("%s: a malformed multipart body", o.what)
		case o.off+int64(len(o.data)) > int64(len(want)) || !bytes.Equal(o.data, want[o.off:o.off+int64(len(o.data))]):
			t.Errorf("%s: %d bytes at %d are not those of the version its ETag %s names", o.what, len(o.data), o.off, o.etag)
		case o.off == 0 && strings.HasPrefix(o.what, "GET") && len(o.data) != len(want):
			t.Errorf("%s: %d bytes, the ISO has %d", o.what, len(o.data), len(want))
		}
		counts[o.etag]++
	}
	if counts[etagA1] == 0 || counts[etagA2] == 0 {
		t.Errorf("responses by version %v: the run did not see both versions", counts)
	}

	// A rotation reaches every replica through the mounted Secret: the new URLs work at
	// once and the old ones for the grace period the file names; a second rotation without
	// grace ends the first key's URLs everywhere. Nothing waits: each replica reads the
	// file again when it changes.
	rotated, err := secret.Rotated(time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := secretVol.Update(map[string]string{"secret": secretText(t, rotated)}); err != nil {
		t.Fatal(err)
	}
	newISO := "/" + capability.Token(rotated.Key, "a") + "/a.iso"
	checkPaths(t, live, map[string]int{newISO: 200, aISO: 200})
	final, err := rotated.Rotated(time.Now(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := secretVol.Update(map[string]string{"secret": secretText(t, final)}); err != nil {
		t.Fatal(err)
	}
	finalISO := "/" + capability.Token(final.Key, "a") + "/a.iso"
	checkPaths(t, live, map[string]int{finalISO: 200, newISO: 404, aISO: 404})
	if resp, body, err := c.get(finalISO); err != nil || resp.StatusCode != 200 || !bytes.Equal(body, a2.iso) {
		t.Errorf("the rotated URL through the balancer: %v %v", err, status(resp))
	}

	// The logs (JSON lines) hold neither the origin's credentials nor a token.
	for i, r := range replicas {
		out := r.output()
		hidden := append([]string{capability.Token(secret.Key, "a"), capability.Token(secret.Key, "b"), capability.Token(rotated.Key, "a"),
			capability.Token(final.Key, "a")}, f.hidden...)
		for _, h := range hidden {
			if strings.Contains(out, h) {
				t.Errorf("replica %d logged %s:\n%s", i, h, out)
			}
		}
		if !strings.Contains(out, "/{token}/a.iso") {
			t.Errorf("replica %d did not log its requests as /{token}/a.iso:\n%s", i, out)
		}
	}
	t.Logf("%d responses checked (%v by ETag), %d retries after the kill", len(seen), counts, c.retries.Load())
	return replicas
}

// secretText is s in the file format of --secret-file.
func secretText(t *testing.T, s *capability.Secret) string {
	t.Helper()
	text, err := s.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// checkPaths checks the status every replica answers each path with.
func checkPaths(t *testing.T, replicas []*servedNode, want map[string]int) {
	t.Helper()
	for i, r := range replicas {
		for path, code := range want {
			if resp, _ := rawGet(t, r.url+path, "Range: bytes=0-0"); resp.StatusCode != code && !(code == 200 && resp.StatusCode == 206) {
				t.Errorf("replica %d: %s answers %d, want %d", i, path, resp.StatusCode, code)
			}
		}
	}
}

// sameValidators returns the ETag of path after checking that every replica answers it
// with the same ETag and Last-Modified (waiting up to 10 seconds for them to agree).
func sameValidators(t *testing.T, replicas []*servedNode, path string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got []string
		for _, r := range replicas {
			resp, _ := rawGet(t, r.url+path, "Range: bytes=0-0")
			got = append(got, resp.Header.Get("ETag")+" "+resp.Header.Get("Last-Modified"))
		}
		agree := got[0] != " "
		for _, g := range got {
			agree = agree && g == got[0]
		}
		if agree {
			return strings.Fields(got[0])[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the replicas answer with %q", path, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func rawGet(t *testing.T, url string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

type bodyPart struct {
	off  int64
	data []byte
}

// multipartParts returns the parts of a multipart/byteranges body with their offsets; a
// malformed body is reported as one part that matches nothing.
func multipartParts(resp *http.Response, body []byte) []bodyPart {
	_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		return []bodyPart{{-1, nil}}
	}
	var parts []bodyPart
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return parts
		}
		if err != nil {
			return append(parts, bodyPart{-1, nil})
		}
		var first, last, total int64
		if _, err := fmt.Sscanf(p.Header.Get("Content-Range"), "bytes %d-%d/%d", &first, &last, &total); err != nil {
			return append(parts, bodyPart{-1, nil})
		}
		data, _ := io.ReadAll(p)
		parts = append(parts, bodyPart{first, data})
	}
}

func status(resp *http.Response) string {
	if resp == nil {
		return "no response"
	}
	return resp.Status
}

func header(resp *http.Response, k string) string {
	if resp == nil {
		return ""
	}
	return resp.Header.Get(k)
}
