package serve

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// kubeVolume lays out dir as the kubelet's atomic writer does for a Secret or ConfigMap:
// the files in a version directory, ..data pointing to it, and each file a link through
// ..data.
type kubeVolume struct {
	t       testing.TB
	dir     string
	version int
}

func newKubeVolume(t testing.TB, dir string, files map[string]string) *kubeVolume {
	v := &kubeVolume{t: t, dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	v.update(files)
	for name := range files {
		if err := os.Symlink(filepath.Join(dataLink, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// update writes a new version and swaps ..data to it, then removes the old version, in the
// kubelet's order.
func (v *kubeVolume) update(files map[string]string) {
	v.t.Helper()
	v.version++
	name := fmt.Sprintf("..2026_12_01_08_00_%02d.%09d", v.version, v.version)
	dir := filepath.Join(v.dir, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		v.t.Fatal(err)
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
			v.t.Fatal(err)
		}
	}
	old, _ := os.Readlink(filepath.Join(v.dir, dataLink))
	tmp := filepath.Join(v.dir, "..data_tmp")
	if err := os.Symlink(name, tmp); err != nil {
		v.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(v.dir, dataLink)); err != nil {
		v.t.Fatal(err)
	}
	if old != "" {
		os.RemoveAll(filepath.Join(v.dir, old))
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
	vol.update(map[string]string{testConfig: configB})
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
	vol := &kubeVolume{t: t, dir: h.nodes}
	vol.update(map[string]string{})
	os.MkdirAll(filepath.Join(h.nodes, dataLink, "a"), 0o755)
	os.WriteFile(filepath.Join(h.nodes, dataLink, "a", testConfig), []byte(configA), 0o644)
	if err := os.Symlink(filepath.Join(dataLink, "a"), filepath.Join(h.nodes, "a")); err != nil {
		t.Fatal(err)
	}
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configA)) {
		t.Fatalf("GET /a.iso: %d", resp.StatusCode)
	}
	// The next version, written whole, then swapped in.
	next := filepath.Join(h.nodes, "..2026_12_01_09_00_00.000000001")
	os.MkdirAll(filepath.Join(next, "a"), 0o755)
	os.WriteFile(filepath.Join(next, "a", testConfig), []byte(configB), 0o644)
	os.Symlink(filepath.Base(next), filepath.Join(h.nodes, "..data_tmp"))
	if err := os.Rename(filepath.Join(h.nodes, "..data_tmp"), filepath.Join(h.nodes, dataLink)); err != nil {
		t.Fatal(err)
	}
	if resp, body := h.get("/a.iso"); resp.StatusCode != 200 || !bytes.Equal(body, h.want(configB)) {
		t.Errorf("after the projected volume changed: %d, new bytes: %v", resp.StatusCode, bytes.Equal(body, h.want(configB)))
	}
}

// An update while a preparation reads the files starts it over on the new version: never a
// node made of two versions.
func TestUpdateDuringPreparation(t *testing.T) {
	var calls atomic.Int32
	var vol *kubeVolume
	h := newHarness(t, "", nil, func(c *Config) {
		c.Prepare = func(dir string) (*Node, []string, error) {
			if calls.Add(1) == 1 {
				// The kubelet swaps the volume between two reads of this preparation.
				vol.update(map[string]string{testConfig: configB})
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
