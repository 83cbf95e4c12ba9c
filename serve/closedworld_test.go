package serve

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sno-iso/sno-iso/internal/bipgen"
	"github.com/sno-iso/sno-iso/nodedir"
)

// TestPrepareDirClosedWorld: a node whose sno.yaml names a file outside its directory is
// not prepared, so no byte of another node's (or the host's) files reaches its media.
func TestPrepareDirClosedWorld(t *testing.T) {
	nodes := t.TempDir()
	dir := filepath.Join(nodes, "sno")
	bip, err := bipgen.Generate(bipgen.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	keyfile := "[connection]\nid=eth0\ntype=ethernet\n\n[ipv4]\nmethod=auto\n"
	for path, content := range map[string]string{
		filepath.Join(dir, nodedir.IgnitionFile): string(bip),
		filepath.Join(dir, nodedir.ConfigFile): "coreOSInstallation:\n  installationDisk: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3\n" +
			"network:\n  keyfiles: [../other/eth0.nmconnection]\n",
		filepath.Join(nodes, "other", "eth0.nmconnection"): keyfile,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var outside *nodedir.OutsideError
	if _, _, err := prepareDir(dir); !errors.As(err, &outside) || outside.Key != "network.keyfiles[0]" {
		t.Fatalf("prepareDir: %v, want an *nodedir.OutsideError for network.keyfiles[0]", err)
	}
}
