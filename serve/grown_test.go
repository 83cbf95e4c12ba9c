package serve

import (
	"bytes"
	"context"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/sno-iso/sno-iso/isobuilder"
	"github.com/sno-iso/sno-iso/node"
)

// bigConfig is a config that does not fit the 256 KiB Ignition area however it compresses.
func bigConfig(seed int64) string {
	b := make([]byte, 300<<10)
	rand.New(rand.NewSource(seed)).Read(b)
	return string(b)
}

// wantGrown is what `build --grow-embed-area` writes for a node with config.
func (h *harness) wantGrown(config string) []byte {
	h.t.Helper()
	return h.built(func(iso *isobuilder.LiveISO) (*isobuilder.Image, error) {
		m, err := testNode([]byte(config)).Media(context.Background(), iso, node.MediaOptions{GrowEmbedArea: true, TempDir: h.t.TempDir()})
		if err != nil {
			return nil, err
		}
		h.t.Cleanup(func() { m.Derived.Close() })
		return m.Image, nil
	})
}

// grownFile is the file the node's grown full ISO is served from.
func (h *harness) grownFile(name string) *sourceFile {
	h.t.Helper()
	ns := h.srv.nodes.get(name)
	ns.isos.mu.Lock()
	defer ns.isos.mu.Unlock()
	if len(ns.isos.m) != 1 || ns.isos.m[""] == nil || ns.isos.m[""].val.grown == nil {
		h.t.Fatalf("node %s has %d grown ISOs, want the full one only", name, len(ns.isos.m))
	}
	return ns.isos.m[""].val.grown
}

func closed(f *sourceFile) bool {
	_, err := f.f.(*os.File).Stat()
	return err != nil
}

// Concurrent first requests share one grown ISO, equal to build's; it is closed when the
// node's files change and when the server closes, and its file never stays on disk.
func TestGrowEmbedArea(t *testing.T) {
	big, small := bigConfig(1), "small config"
	tempDir := t.TempDir()
	h := newHarness(t, "", map[string]string{"big": big, "small": small}, func(c *testSetup) {
		c.GrowEmbedArea, c.TempDir = true, tempDir
	})
	want := h.wantGrown(big)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := h.get("/big.iso")
			if resp.StatusCode != 200 || !bytes.Equal(body, want) {
				t.Errorf("/big.iso: %d, %d bytes, want the %d bytes build --grow-embed-area writes", resp.StatusCode, len(body), len(want))
			}
		}()
	}
	wg.Wait()
	first := h.grownFile("big")
	if n := strings.Count(h.log.String(), "node big: compressed payload is too large"); n != 1 {
		t.Errorf("the log says %d times that node big is served from a grown ISO, want once:\n%s", n, h.log.String())
	}
	if _, body := h.get("/small.iso"); !bytes.Equal(body, h.want(small)) {
		t.Error("a node that fits is not served over the pristine ISO")
	}
	if ents, _ := os.ReadDir(tempDir); len(ents) != 0 {
		t.Errorf("the grown ISO is left in the temporary directory: %v", ents)
	}

	changed := bigConfig(2)
	h.writeNode("big", changed)
	if _, body := h.get("/big.iso"); !bytes.Equal(body, h.wantGrown(changed)) {
		t.Error("after the node changed, /big.iso is not its new grown ISO")
	}
	if !closed(first) {
		t.Error("the grown ISO of the node's previous files is still open")
	}
	second := h.grownFile("big")
	h.srv.Close()
	if !closed(second) {
		t.Error("the grown ISO is still open after Close")
	}
}

// Without GrowEmbedArea such a node is an error naming the cause.
func TestGrowEmbedAreaOff(t *testing.T) {
	h := newHarness(t, "", map[string]string{"big": bigConfig(1)}, nil)
	if resp, body := h.get("/big.iso"); resp.StatusCode != 500 || !bytes.Contains(body, []byte("too large")) {
		t.Errorf("/big.iso: %d %s", resp.StatusCode, body)
	}
}

// A retired file stays open while a request reads it, and cannot be held again.
func TestOwnedFileLease(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "grown")
	if err != nil {
		t.Fatal(err)
	}
	src, err := newSourceFile(f, "id")
	if err != nil {
		t.Fatal(err)
	}
	src.owner = f
	if !src.hold() {
		t.Fatal("a live file cannot be held")
	}
	src.retire()
	if closed(src) {
		t.Error("retiring closed a file a request holds")
	}
	if src.hold() {
		t.Error("a retired file was held again")
	}
	src.release()
	if !closed(src) {
		t.Error("the retired file is open after its last request")
	}
	var none *sourceFile
	if !none.hold() {
		t.Error("an artifact without a file cannot be held")
	}
	none.release()
}
