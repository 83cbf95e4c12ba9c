package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
)

// customizedISO returns a copy of the 2023-07 x86_64 fixture with a config, a keyfile and a
// karg embedded, and the pristine bytes.
func customizedISO(t *testing.T) (iso string, pristine []byte) {
	t.Helper()
	iso = fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	pristine, _ = os.ReadFile(iso)
	mustSno(t, []byte(smallConfig), "ignition", "embed", iso)
	mustSno(t, nil, "network", "embed", "-k", filepath.Join(keyfileDir(t), "a.nmconnection"), iso)
	mustSno(t, nil, "kargs", "modify", "-a", "customized=1", iso)
	return iso, pristine
}

// checkRecoverable asserts what an interrupted in-place edit must leave: an ISO that inspect
// reads (saying which areas are damaged or disagree), that kargs reset makes consistent and
// reset brings back to the pristine bytes.
func checkRecoverable(t *testing.T, iso string, pristine []byte) {
	t.Helper()
	info := inspectJSON(t, iso)
	kargs := info.Kargs
	disagree := false
	for _, a := range kargs.Areas {
		disagree = disagree || a.Kargs != kargs.Areas[0].Kargs
	}
	if disagree != (kargs.Problem != "") || disagree != (kargs.Current == "") {
		t.Fatalf("inspect: areas %+v but current %q, problem %q", kargs.Areas, kargs.Current, kargs.Problem)
	}
	text := string(mustSno(t, nil, "inspect", iso))
	if strings.Contains(text, "the areas disagree") != disagree || strings.Contains(text, "DAMAGED") != (disagree || info.Ignition.Problem != "") {
		t.Fatalf("inspect's text does not match its JSON (disagree %v, Ignition problem %q):\n%s", disagree, info.Ignition.Problem, text)
	}
	if disagree {
		wantFailure(t, sno(t, nil, "kargs", "modify", "-a", "x", iso), "disagree", "kargs reset")
		mustSno(t, nil, "kargs", "reset", iso)
		if got := showKargs(t, iso); got != kargs.Default {
			t.Fatalf("after kargs reset: %q, want the default %q", got, kargs.Default)
		}
	}
	mustSno(t, nil, "reset", iso)
	if got, _ := os.ReadFile(iso); !bytes.Equal(got, pristine) {
		t.Fatal("reset did not bring back the pristine ISO")
	}
}

// TestInterruptedEditStates cuts every multi-area in-place edit at many points, as a kill
// would: WriteInPlace writes the patches in offset order, each front to back, so the ISO then
// holds the new bytes before the cut and the old ones after it.
func TestInterruptedEditStates(t *testing.T) {
	edits := [][]string{
		{"reset"},
		{"kargs", "modify", "-a", "edited=2"},
		{"ignition", "embed", "-f", "-i", "CONFIG"},
	}
	cfg := filepath.Join(t.TempDir(), "other.ign")
	writeFile(t, cfg, smallConfig+"\n") // other bytes, other compressed payload
	for _, edit := range edits {
		t.Run(strings.Join(edit, " "), func(t *testing.T) {
			iso, pristine := customizedISO(t)
			before, _ := os.ReadFile(iso)
			args := append([]string{}, edit...)
			for i := range args {
				if args[i] == "CONFIG" {
					args[i] = cfg
				}
			}
			mustSno(t, nil, append(args, iso)...)
			after, _ := os.ReadFile(iso)
			for _, cut := range cutPoints(before, after) {
				state := append(append([]byte{}, after[:cut]...), before[cut:]...)
				os.WriteFile(iso, state, 0o644)
				checkRecoverable(t, iso, pristine)
			}
		})
	}
}

// cutPoints returns where to interrupt the change from before to after: the start, middle and
// end of each run of changed bytes.
func cutPoints(before, after []byte) []int {
	var cuts []int
	for i := 0; i < len(before); i++ {
		if before[i] == after[i] {
			continue
		}
		start := i
		for i < len(before) && (before[i] != after[i] || i+16 < len(before) && !bytes.Equal(before[i:i+16], after[i:i+16])) {
			i++
		}
		cuts = append(cuts, start, start+1, (start+i)/2, i-1)
	}
	return cuts
}

// TestKilledInPlaceEdit kills in-place edits at random moments, a bounded number of times,
// and checks every result is readable and repairable.
func TestKilledInPlaceEdit(t *testing.T) {
	const rounds = 16
	for i := range rounds {
		iso, pristine := customizedISO(t)
		args := []string{"reset", iso}
		if i%2 == 1 {
			args = []string{"kargs", "modify", "-a", "edited=2", iso}
		}
		cmd := exec.Command(snoISO(t), args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The moment only chooses where the edit is cut; nothing asserts on time.
		time.Sleep(time.Duration(rand.IntN(40000)) * time.Microsecond)
		cmd.Process.Kill()
		cmd.Wait()
		checkRecoverable(t, iso, pristine)
		if ents := dirEntries(t, filepath.Dir(iso)); len(ents) != 1 {
			t.Fatalf("round %d left %v", i, ents)
		}
	}
}
