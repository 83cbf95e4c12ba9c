package serve

import (
	"bytes"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/sno-iso/sno-iso/internal/kubevol"
	"github.com/sno-iso/sno-iso/node"
)

func newKubeVolume(t testing.TB, dir string, files map[string]string) *kubevol.Volume {
	t.Helper()
	v, err := kubevol.New(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func updateVolume(t testing.TB, v *kubevol.Volume, files map[string]string) {
	t.Helper()
	if err := v.Update(files); err != nil {
		t.Fatal(err)
	}
}

// A node's Secret updated in place is picked up without a restart; the hidden entries of
// the volume are not nodes.
func TestKubernetesVolumeNode(t *testing.T) {
	h := newHarness(t, "", nil, nil)
	vol := newKubeVolume(t, filepath.Join(h.nodes, "a"), map[string]string{testConfig: configA})
	first, body := h.get("/a.iso")
	if first.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
		t.Fatalf("GET /a.iso: %d", first.StatusCode)
	}
	updateVolume(t, vol, map[string]string{testConfig: configB})
	resp, body := h.get("/a.iso")
	if resp.StatusCode != 200 || !bytes.Equal(body, h.want(configB)) || resp.Header.Get("ETag") == first.Header.Get("ETag") {
		t.Errorf("after the Secret changed: %d, ETag %s (was %s), new bytes: %v", resp.StatusCode, resp.Header.Get("ETag"), first.Header.Get("ETag"), bytes.Equal(body, h.want(configB)))
	}
	calls := h.calls.Load()
	h.get("/a.iso", "Range: bytes=0-9")
	if h.calls.Load() != calls {
		t.Error("an unchanged volume was prepared again")
	}
	for _, hidden := range []string{"/..data.iso", "/" + dataLink + "/initrd.img"} {
		if resp, _ := h.get(hidden); resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", hidden, resp.StatusCode)
		}
	}
}

// A projected volume holding every node: NODES/..data, NODES/NODE -> ..data/NODE.
func TestProjectedVolumeNodes(t *testing.T) {
	h := newHarness(t, "", nil, nil)
	// The nodes directory is the volume: NODES/a -> ..data/a.
	vol := newKubeVolume(t, h.nodes, map[string]string{"a/" + testConfig: configA})
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
		t.Fatalf("GET /a.iso: %d", resp.StatusCode)
	}
	updateVolume(t, vol, map[string]string{"a/" + testConfig: configB})
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configB)) {
		t.Errorf("after the projected volume changed: %d, new bytes: %v", resp.StatusCode, bytes.Equal(body, h.want(configB)))
	}
}

// An update while a preparation reads the files starts it over on the new version: never a
// node made of two versions.
func TestUpdateDuringPreparation(t *testing.T) {
	var calls atomic.Int32
	var vol *kubevol.Volume
	h := newHarness(t, "", nil, func(c *testSetup) {
		c.prepare = func(dir string) (*node.Node, []string, error) {
			if calls.Add(1) == 1 {
				// The kubelet swaps the volume between two reads of this preparation.
				updateVolume(t, vol, map[string]string{testConfig: configB})
			}
			raw, err := os.ReadFile(filepath.Join(dir, testConfig))
			if err != nil {
				return nil, nil, err
			}
			return testNode(raw), nil, nil
		}
	})
	vol = newKubeVolume(t, filepath.Join(h.nodes, "a"), map[string]string{testConfig: configA})
	resp, body := h.get("/a.iso")
	if resp.StatusCode != 200 || !bytes.Equal(body, h.want(configB)) {
		t.Errorf("a node updated during its preparation: %d, the new version: %v", resp.StatusCode, bytes.Equal(body, h.want(configB)))
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d preparations, want 2 (the second on the new version)", n)
	}
}
