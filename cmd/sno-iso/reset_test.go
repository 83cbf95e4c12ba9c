package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// TestReset: after every customization the fixture supports, reset gives back the pristine
// bytes in every output mode.
func TestReset(t *testing.T) {
	key := filepath.Join(keyfileDir(t), "a.nmconnection")
	for _, name := range fixtures.CoreOSISOs {
		t.Run(name, func(t *testing.T) {
			iso := fixtures.File(t, name)
			pristine := fileSHA(t, iso)
			for _, s := range outputModes(t, iso, nil, "reset") {
				if s != pristine {
					t.Fatal("reset changed a pristine ISO")
				}
			}

			mustSno(t, []byte(smallConfig), "ignition", "embed", iso)
			if slices.Contains(networkFixtures, name) {
				mustSno(t, nil, "network", "embed", "-k", key, iso)
			}
			if slices.Contains(kargsFixtures, name) {
				mustSno(t, nil, "kargs", "modify", "-a", "foo", "-d", "ignition.firstboot", iso)
			}
			for _, s := range outputModes(t, iso, nil, "reset") {
				if s != pristine {
					t.Fatal("reset did not restore the pristine bytes")
				}
			}
		})
	}
}

// TestResetRepairsUndecodableArea: reset does not read the area, so it also cures garbage.
func TestResetRepairsUndecodableArea(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	pristine := fileSHA(t, iso)
	info := inspectJSON(t, iso)
	b, _ := os.ReadFile(iso)
	copy(b[info.Ignition.Offset:], "\xfd7zXZ\x00garbage")
	os.WriteFile(iso, b, 0o644)
	wantFailure(t, sno(t, nil, "ignition", "show", iso), "Ignition area")
	mustSno(t, nil, "reset", iso)
	if fileSHA(t, iso) != pristine {
		t.Fatal("reset did not restore the pristine bytes")
	}
}
