package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/capability"
	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/testenv"
	"github.com/sno-iso/sno-iso/isobuilder"
)

const (
	configA = `{"ignition":{"version":"3.2.0"},"node":"a"}`
	configB = `{"ignition":{"version":"3.2.0"},"node":"b"}`
)

func TestFullISOAndHead(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA, "b": configB}, nil)
	for name, config := range map[string]string{"a": configA, "b": configB} {
		resp, body := h.get("/" + name + ".iso")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /%s.iso: %s", name, resp.Status)
		}
		if !bytes.Equal(body, h.want(config)) {
			t.Errorf("GET /%s.iso: the %d bytes served are not the ISO customized with its config", name, len(body))
		}
		head, headBody := h.do(http.MethodHead, "/"+name+".iso")
		if len(headBody) != 0 || head.ContentLength != int64(len(body)) {
			t.Errorf("HEAD /%s.iso: Content-Length %d and %d body bytes, want %d and none", name, head.ContentLength, len(headBody), len(body))
		}
		for _, k := range []string{"ETag", "Last-Modified", "Content-Type", "Accept-Ranges"} {
			if head.Header.Get(k) == "" || head.Header.Get(k) != resp.Header.Get(k) {
				t.Errorf("%s: HEAD says %q, GET says %q", k, head.Header.Get(k), resp.Header.Get(k))
			}
		}
		if etag := resp.Header.Get("ETag"); !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || len(etag) < 10 {
			t.Errorf("ETag %q is not a strong entity tag", etag)
		}
	}
	respA, _ := h.get("/a.iso")
	respB, _ := h.get("/b.iso")
	if respA.Header.Get("ETag") == respB.Header.Get("ETag") {
		t.Error("two nodes with different configs share an ETag")
	}
	if n := h.calls.Load(); n != 2 {
		t.Errorf("%d preparations for 2 nodes and many requests, want 2", n)
	}
}

func TestRanges(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	full := h.want(configA)
	size := int64(len(full))
	ignition := int64(139264) // the fixture's Ignition area: ranges across the patch edge
	tests := []struct {
		header string
		want   [][2]int64 // inclusive ranges; nil: the whole file with 200
		status int
	}{
		{"bytes=0-1023", [][2]int64{{0, 1023}}, 206},
		{fmt.Sprintf("bytes=%d-%d", ignition-10, ignition+9), [][2]int64{{ignition - 10, ignition + 9}}, 206},
		{"bytes=-500", [][2]int64{{size - 500, size - 1}}, 206},
		{fmt.Sprintf("bytes=%d-", size-100), [][2]int64{{size - 100, size - 1}}, 206},
		{fmt.Sprintf("bytes=%d-%d", size-10, size+1000), [][2]int64{{size - 10, size - 1}}, 206},
		{fmt.Sprintf("bytes=0-0, %d-%d,-1", ignition-1, ignition+300000),
			[][2]int64{{0, 0}, {ignition - 1, ignition + 300000}, {size - 1, size - 1}}, 206},
		{fmt.Sprintf("BYTES=5-9,%d-", size+5), [][2]int64{{5, 9}}, 206}, // an unsatisfiable one among others is dropped
		{"items=0-10", nil, 200},
		{"bytes=0-" + strconv.FormatInt(size-1, 10) + ",0-10", nil, 200}, // more bytes than the file: the file
		{"bytes=" + strings.Repeat("0-0,", maxRanges) + "1-1", nil, 200},
		{fmt.Sprintf("bytes=%d-", size), nil, 416},
		{"bytes=-0", nil, 416},
		{"bytes=10-5", nil, 416},
		{"bytes=a-b", nil, 416},
		{"bytes=+1-2", nil, 416},
		{"bytes=", nil, 416},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			resp, body := h.get("/a.iso", "Range: "+tt.header)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, tt.status, body)
			}
			switch {
			case tt.status == 416:
				if got := resp.Header.Get("Content-Range"); got != fmt.Sprintf("bytes */%d", size) {
					t.Errorf("Content-Range %q", got)
				}
			case tt.want == nil:
				if !bytes.Equal(body, full) {
					t.Error("the whole file differs")
				}
			case len(tt.want) == 1:
				from, to := tt.want[0][0], tt.want[0][1]
				if got, want := resp.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-%d/%d", from, to, size); got != want {
					t.Errorf("Content-Range %q, want %q", got, want)
				}
				if !bytes.Equal(body, full[from:to+1]) || resp.ContentLength != to-from+1 {
					t.Errorf("%d bytes (Content-Length %d) differ from bytes %d-%d", len(body), resp.ContentLength, from, to)
				}
			default:
				checkMultipart(t, resp, body, full, tt.want)
			}
		})
	}
}

func checkMultipart(t *testing.T, resp *http.Response, body, full []byte, want [][2]int64) {
	t.Helper()
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("Content-Length %d for a %d-byte body", resp.ContentLength, len(body))
	}
	mediaType, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/byteranges" {
		t.Fatalf("Content-Type %q: %v", resp.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for i, w := range want {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		if got, wantCR := p.Header.Get("Content-Range"), fmt.Sprintf("bytes %d-%d/%d", w[0], w[1], len(full)); got != wantCR {
			t.Errorf("part %d: Content-Range %q, want %q", i, got, wantCR)
		}
		if p.Header.Get("Content-Type") != isoType {
			t.Errorf("part %d: Content-Type %q", i, p.Header.Get("Content-Type"))
		}
		data, err := io.ReadAll(p)
		if err != nil || !bytes.Equal(data, full[w[0]:w[1]+1]) {
			t.Errorf("part %d: %d bytes differ from bytes %d-%d (%v)", i, len(data), w[0], w[1], err)
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("after %d parts: %v, want the end", len(want), err)
	}
}

func TestConditionalRequests(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	first, full := h.get("/a.iso")
	etag, lastModified := first.Header.Get("ETag"), first.Header.Get("Last-Modified")
	modTime, err := http.ParseTime(lastModified)
	if err != nil {
		t.Fatalf("Last-Modified %q: %v", lastModified, err)
	}
	before := modTime.Add(-time.Hour).Format(http.TimeFormat)
	tests := []struct {
		name    string
		headers []string
		status  int
	}{
		{"If-None-Match current", []string{"If-None-Match: " + etag}, 304},
		{"If-None-Match weak form", []string{`If-None-Match: "x", W/` + etag}, 304},
		{"If-None-Match *", []string{"If-None-Match: *"}, 304},
		{"If-None-Match stale", []string{`If-None-Match: "stale"`}, 200},
		{"If-None-Match wins over If-Modified-Since", []string{`If-None-Match: "stale"`, "If-Modified-Since: " + lastModified}, 200},
		{"If-Modified-Since earlier", []string{"If-Modified-Since: " + before}, 200},
		{"If-Modified-Since garbage", []string{"If-Modified-Since: yesterday"}, 200},
		{"If-Match current", []string{"If-Match: " + etag}, 200},
		{"If-Match stale", []string{`If-Match: "stale"`}, 412},
		{"If-Match weak never matches", []string{"If-Match: W/" + etag}, 412},
		{"If-Unmodified-Since same", []string{"If-Unmodified-Since: " + lastModified}, 200},
		{"If-Range current ETag", []string{"Range: bytes=0-9", "If-Range: " + etag}, 206},
		{"If-Range stale ETag", []string{"Range: bytes=0-9", `If-Range: "stale"`}, 200},
		{"If-Range weak ETag", []string{"Range: bytes=0-9", "If-Range: W/" + etag}, 200},
		{"If-Range other date", []string{"Range: bytes=0-9", "If-Range: " + before}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := h.get("/a.iso", tt.headers...)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			switch tt.status {
			case 304:
				if len(body) != 0 || resp.Header.Get("ETag") != etag {
					t.Errorf("304 with %d body bytes and ETag %q", len(body), resp.Header.Get("ETag"))
				}
			case 200:
				if !bytes.Equal(body, full) {
					t.Error("the 200 body is not the whole file")
				}
			case 206:
				if !bytes.Equal(body, full[:10]) {
					t.Error("the 206 body is not bytes 0-9")
				}
			}
		})
	}
}

// Last-Modified is the ISO's, whenever a replica read the node's files: it validates what is
// the ISO's bytes alone, and only the ETag validates a node's media, which changes without it.
func TestDatesValidateOnlyTheISOsBytes(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	node, full := h.get("/a.iso")
	rootfs, _ := h.get("/rootfs.img")
	lastModified := node.Header.Get("Last-Modified")
	if lastModified == "" || rootfs.Header.Get("Last-Modified") != lastModified {
		t.Fatalf("Last-Modified of a node's ISO %q, of the rootfs %q: want the ISO's for both", lastModified, rootfs.Header.Get("Last-Modified"))
	}
	earlier := "Mon, 02 Jan 2006 15:04:05 GMT"
	// Each with Range: bytes=0-9. For the node, a date neither stops the request nor
	// validates the range.
	tests := []struct {
		header             string
		nodeStatus, rootfs int
	}{
		{"If-Modified-Since: " + lastModified, 206, 304},
		{"If-Unmodified-Since: " + earlier, 206, 412},
		{"If-Range: " + lastModified, 200, 206},
	}
	for _, tt := range tests {
		resp, body := h.get("/a.iso", tt.header, "Range: bytes=0-9")
		want := full
		if tt.nodeStatus == 206 {
			want = full[:10]
		}
		if resp.StatusCode != tt.nodeStatus || !bytes.Equal(body, want) {
			t.Errorf("/a.iso with %s: %d and %d bytes, want %d and %d", tt.header, resp.StatusCode, len(body), tt.nodeStatus, len(want))
		}
		if resp, _ := h.get("/rootfs.img", tt.header, "Range: bytes=0-9"); resp.StatusCode != tt.rootfs {
			t.Errorf("/rootfs.img with %s: %d, want %d", tt.header, resp.StatusCode, tt.rootfs)
		}
	}
	h.writeNode("a", configB)
	changed, _ := h.get("/a.iso")
	if changed.Header.Get("ETag") == node.Header.Get("ETag") || changed.Header.Get("Last-Modified") != lastModified {
		t.Errorf("after the node changed: ETag %s (was %s), Last-Modified %s (was %s)", changed.Header.Get("ETag"), node.Header.Get("ETag"),
			changed.Header.Get("Last-Modified"), lastModified)
	}
}

// A node is prepared once, and again when one of its files changes: new bytes, new ETag.
func TestNodeFilesChange(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	first, _ := h.get("/a.iso")
	for range 5 {
		again, _ := h.get("/a.iso", "Range: bytes=0-99")
		if again.Header.Get("ETag") != first.Header.Get("ETag") {
			t.Fatal("the ETag changed with nothing changed")
		}
	}
	if n := h.calls.Load(); n != 1 {
		t.Fatalf("%d preparations for an unchanged node, want 1", n)
	}
	const changed = `{"ignition":{"version":"3.2.0"},"node":"a, edited"}`
	h.writeNode("a", changed)
	resp, body := h.get("/a.iso")
	if resp.Header.Get("ETag") == first.Header.Get("ETag") {
		t.Error("the ETag did not change with the config")
	}
	if !bytes.Equal(body, h.want(changed)) {
		t.Error("the bytes served are not those of the edited config")
	}
	if revalidated, _ := h.get("/a.iso", "If-None-Match: "+first.Header.Get("ETag")); revalidated.StatusCode != http.StatusOK {
		t.Errorf("revalidating the old version: %d, want 200", revalidated.StatusCode)
	}
	if n := h.calls.Load(); n != 2 {
		t.Errorf("%d preparations, want 2", n)
	}
}

func TestNotFoundAndTraversal(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA, "bad name": configA, "x-minimal": configA}, nil)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, testConfig), []byte(configA), 0o644)
	var paths []string
	for _, p := range []string{
		"/nope.iso", "/a", "/a.img", "/a/", "/a/vmlinuz/x", "/a/config.ign", "/a/" + testConfig,
		"/../a.iso", "/%2e%2e/a.iso", "/a/../a.iso", "/.a.iso", "/" + filepath.Base(outside) + ".iso",
		"/bad%20name.iso", "/x-minimal.iso", "/x.iso", "/a-minimal/vmlinuz", "/rootfs.img/x", "/-minimal.iso",
		"/.iso", "//a.iso", "/a.iso/", "/nope/boot.ipxe", "/nope/vmlinuz", "/" + capability.SecretFileName + "/a.iso",
	} {
		// Under a token computed for the name the path ends in, and without one.
		paths = append(paths, p, h.path(p))
	}
	for _, p := range paths {
		req, _ := http.NewRequest(http.MethodGet, h.url, nil)
		req.URL.Opaque = p // sent as written, not cleaned by the client
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404 (%s)", p, resp.StatusCode, body)
		}
	}
	resp, body := h.get("/")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "/a.iso") || !strings.Contains(string(body), "bad name: not served") ||
		!strings.Contains(string(body), "x-minimal: not served") {
		t.Errorf("the index does not list the node and the directories not served:\n%s", body)
	}
	if resp, _ := h.do(http.MethodPost, "/a.iso"); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	// A node added while serving is found without a restart.
	h.writeNode("late", configB)
	if resp, body := h.get("/late.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configB)) {
		t.Errorf("a node added while serving: %d", resp.StatusCode)
	}
}

func TestBrokenNode(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA, "broken": "broken config", "empty": ""}, nil)
	os.Remove(filepath.Join(h.nodes, "empty", testConfig))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
				t.Errorf("a working node next to broken ones: %d", resp.StatusCode)
			}
		})
	}
	wg.Wait()
	// The client is told what kind of problem it is; the log, and only the log, says where
	// and what.
	for path, want := range map[string]struct{ body, log []string }{
		"/broken.iso": {[]string{"cannot be used"},
			[]string{"node broken", filepath.Join(h.nodes, "broken", testConfig), "broken on purpose"}},
		"/broken/initrd.img": {[]string{"cannot be used"}, []string{"node broken", "broken on purpose"}},
		"/empty.iso": {[]string{"a file of the node cannot be read"},
			[]string{"node empty", filepath.Join(h.nodes, "empty", testConfig), "no such file"}},
		"/broken-minimal.iso": {[]string{"cannot be used"}, []string{"node broken"}},
	} {
		resp, body := h.get(path)
		if resp.StatusCode != http.StatusInternalServerError {
			t.Errorf("GET %s: %d, want 500", path, resp.StatusCode)
		}
		for _, w := range want.body {
			if !strings.Contains(string(body), w) {
				t.Errorf("GET %s: %q does not say %q", path, body, w)
			}
		}
		if strings.Contains(string(body), h.nodes) || strings.Contains(string(body), "broken on purpose") {
			t.Errorf("GET %s: the body %q shows the server's paths or the file's problem", path, body)
		}
		for _, w := range want.log {
			if !strings.Contains(h.log.String(), w) {
				t.Errorf("GET %s: the log does not name %q:\n%s", path, w, h.log.String())
			}
		}
	}
	// Fixing the file is enough.
	h.writeNode("broken", configB)
	if resp, body := h.get("/broken.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configB)) {
		t.Errorf("after fixing the node: %d", resp.StatusCode)
	}
}

func TestPXE(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, func(c *testSetup) { c.BaseURL = "http://192.0.2.1:8080/" })
	for path, want := range map[string][]byte{
		"/a/vmlinuz":    h.pxeBytes("vmlinuz"),
		"/a/rootfs.img": h.pxeBytes("rootfs.img"),
		"/rootfs.img":   h.pxeBytes("rootfs.img"),
		"/a/boot.ipxe": []byte("#!ipxe\n# Single Node OpenShift live boot, written by sno-iso pxe build.\n" +
			"kernel http://192.0.2.1:8080" + h.path("/a/vmlinuz") +
			" initrd=main mitigations=auto,nosmt ignition.firstboot ignition.platform.id=metal coreos.live.rootfs_url=http://192.0.2.1:8080" +
			h.path("/a/rootfs.img") + "\n" +
			"initrd --name main http://192.0.2.1:8080" + h.path("/a/initrd.img") + "\nboot\n"),
	} {
		resp, body := h.get(path)
		if resp.StatusCode != 200 || !bytes.Equal(body, want) {
			t.Errorf("GET %s: %d, %q, want %q", path, resp.StatusCode, body, want)
		}
	}
	// The fixture's initramfs is a placeholder: a 500, explained in the log, while the rest
	// is served.
	resp, body := h.get("/a/initrd.img")
	if resp.StatusCode != 500 || strings.Contains(string(body), h.iso) {
		t.Errorf("GET /a/initrd.img of a placeholder initramfs: %d %q", resp.StatusCode, body)
	}
	if log := h.log.String(); !strings.Contains(log, "not a CoreOS live initramfs") || !strings.Contains(log, h.iso) {
		t.Errorf("the log does not say why initrd.img cannot be served:\n%s", log)
	}
}

// Without a base URL, boot.ipxe names the host the request was sent to.
func TestBootIPXEFromHost(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	_, body := h.get("/a/boot.ipxe")
	if want := "kernel " + h.url + h.path("/a/vmlinuz") + " initrd=main "; !strings.Contains(string(body), want) {
		t.Errorf("boot.ipxe %q lacks %q", body, want)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: a_b!\r\nConnection: close\r\n\r\n", h.path("/a/boot.ipxe"))
	reply, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(reply), "HTTP/1.1 400") || !strings.Contains(string(reply), "base URL") {
		t.Errorf("a Host that is no host name: %q", reply)
	}
}

func TestMinimal(t *testing.T) {
	tempDir := t.TempDir()
	h := newHarness(t, "", map[string]string{"a": configA, "b": configB}, func(c *testSetup) {
		c.BaseURL, c.TempDir = "http://192.0.2.1:8080", tempDir
	})
	iso, err := isobuilder.Open(h.iso)
	if err != nil {
		t.Fatal(err)
	}
	defer iso.Close()
	for _, node := range []struct{ name, config string }{{"a", configA}, {"b", configB}} {
		resp, body := h.get("/" + node.name + "-minimal.iso")
		if resp.StatusCode != 200 {
			t.Fatalf("GET /%s-minimal.iso: %d %s", node.name, resp.StatusCode, body)
		}
		// The node's live system fetches its rootfs from the node's own capability path, in
		// the nodes' places: clients without a token reading /rootfs.img cannot starve it.
		own := "http://192.0.2.1:8080" + h.path("/"+node.name+"/rootfs.img")
		if !bytes.Contains(body, []byte("coreos.live.rootfs_url="+own+"\n")) || bytes.Contains(body, []byte("8080/rootfs.img")) {
			t.Errorf("/%s-minimal.iso does not fetch its rootfs from %s alone", node.name, own)
		}
		if resp, _ := h.doRaw(http.MethodHead, strings.TrimPrefix(own, "http://192.0.2.1:8080")); resp.StatusCode != 200 {
			t.Errorf("HEAD %s: %d", own, resp.StatusCode)
		}
		base, err := iso.MinimalFromMiniso(context.Background(), t.TempDir(), isobuilder.MinimalOptions{RootfsURL: own})
		if err != nil {
			t.Fatal(err)
		}
		img, err := customized(base.LiveISO, map[string][]byte{"config.ign": []byte(node.config)})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := io.ReadAll(io.NewSectionReader(img, 0, img.Size()))
		base.Close()
		if !bytes.Equal(body, want) {
			t.Errorf("/%s-minimal.iso: %d bytes, not the %d bytes of the customized minimal ISO", node.name, len(body), len(want))
		}
	}
	h.srv.mu.Lock()
	made := len(h.srv.iso.minimal.all())
	h.srv.mu.Unlock()
	if made != 1 {
		t.Errorf("%d minimal ISOs were made for 2 nodes with one rootfs URL, want one", made)
	}
	if ents, _ := os.ReadDir(tempDir); len(ents) != 0 {
		t.Errorf("the minimal ISO is left in the temporary directory: %v", ents)
	}
}

func TestMinimalNeedsARootfsURL(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	if resp, body := h.get("/a-minimal.iso"); resp.StatusCode != 500 || !strings.Contains(string(body), "base URL") {
		t.Errorf("a minimal ISO without a rootfs URL: %d %q", resp.StatusCode, body)
	}
}

// Past MaxConcurrent responses in progress, a request is refused at once with 503 and
// Retry-After rather than queued; the place is free again once the response ends.
func TestConcurrencyLimit(t *testing.T) {
	h := newHarness(t, paddedISO(t, paddedSize), map[string]string{"a": configA}, func(c *testSetup) {
		c.MaxConcurrent = 1
	})
	stalled := h.stalledGet("/a.iso")
	resp, body := h.get("/a.iso")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "retry") {
		t.Errorf("past the limit: %d, Retry-After %q, %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	stalled.Close()
	if status := h.statusOnceFree("/a.iso"); status != 200 {
		t.Errorf("after the response in progress ended: %d", status)
	}
}

// Replacing the ISO file is noticed: the new version is parsed and served, and the old one
// closed.
func TestISOReplaced(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	first, _ := h.get("/a.iso")
	old, err := os.Stat(h.iso)
	if err != nil {
		t.Fatal(err)
	}
	if openOn(t, old) == 0 {
		t.Fatal("the server does not hold the ISO open: the test below would prove nothing")
	}
	next := filepath.Join(t.TempDir(), "next.iso")
	if err := os.WriteFile(next, fixtures.Bytes(t, "embed-areas-2021-12.iso"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, h.iso); err != nil {
		t.Fatal(err)
	}
	resp, body := h.get("/a.iso")
	if resp.StatusCode != 200 || resp.Header.Get("ETag") == first.Header.Get("ETag") || !bytes.Equal(body, h.want(configA)) {
		t.Errorf("after replacing the ISO: %d, ETag %s (was %s)", resp.StatusCode, resp.Header.Get("ETag"), first.Header.Get("ETag"))
	}
	h.srv.closing.Wait()
	if n := openOn(t, old); n > 0 {
		t.Errorf("%d descriptors still open on the replaced ISO: the old one was not closed", n)
	}
	if !strings.Contains(h.log.String(), "changed: serving the new version") {
		t.Errorf("the log does not say the ISO changed:\n%s", h.log.String())
	}
	// A broken replacement is an error naming it, not a crash or stale bytes.
	os.WriteFile(h.iso+".tmp", []byte("not an ISO"), 0o644)
	os.Rename(h.iso+".tmp", h.iso)
	if resp, body := h.get("/a.iso"); resp.StatusCode != 500 || strings.Contains(string(body), h.iso) ||
		!strings.Contains(h.log.String(), h.iso) {
		t.Errorf("after replacing the ISO by garbage: %d %q, the path in the log only:\n%s", resp.StatusCode, body, h.log.String())
	}
}

// openFDs counts this process's open file descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		testenv.Missing(t, "cannot count open files: %v", err)
	}
	return len(ents)
}

// openOn counts this process's descriptors open on the file file (by device and inode, so
// also once it is renamed over or deleted); other tests' files and connections do not count.
func openOn(t testing.TB, file os.FileInfo) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		testenv.Missing(t, "cannot list open files: %v", err)
	}
	n := 0
	for _, e := range ents {
		if info, err := os.Stat(filepath.Join("/proc/self/fd", e.Name())); err == nil && os.SameFile(info, file) {
			n++
		}
	}
	return n
}

func TestAccessLog(t *testing.T) {
	h := newHarness(t, "", map[string]string{"a": configA}, nil)
	h.get("/a.iso", "Range: bytes=0-1023")
	h.get("/nope.iso")
	h.do(http.MethodHead, "/a.iso")
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(h.log.String()), "\n") {
		if strings.Contains(l, "HTTP/1.1") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 3 {
		t.Fatalf("%d access log lines for 3 requests:\n%s", len(lines), h.log.String())
	}
	for i, want := range [][]string{
		{`"GET /{token}/a.iso HTTP/1.1" 206 1024`, `range="bytes=0-1023"`},
		{`"GET /{token}/nope.iso HTTP/1.1" 404`, `error="no node \"nope\"`},
		{`"HEAD /{token}/a.iso HTTP/1.1" 200 0`},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("log line %q lacks %q", lines[i], w)
			}
		}
	}
}

// Serve stops accepting when its context ends and lets a download in progress finish.
func TestGracefulShutdown(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	nodes := t.TempDir()
	os.Mkdir(filepath.Join(nodes, "a"), 0o755)
	os.WriteFile(filepath.Join(nodes, "a", testConfig), []byte(configA), 0o644)
	var calls atomic.Int32
	srv, err := newServer(Config{ISO: iso, NodesDir: nodes, Open: true}, testPrepare(&calls))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- srv.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	resp, err := http.Get(url + "/a.iso")
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 1000)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	cancel()
	time.Sleep(100 * time.Millisecond)
	rest, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || int64(len(first)+len(rest)) != resp.ContentLength {
		t.Errorf("the download in progress got %d of %d bytes: %v", len(first)+len(rest), resp.ContentLength, err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if _, err := http.Get(url + "/a.iso"); err == nil {
		t.Error("a new request after shutdown was answered")
	}
}
