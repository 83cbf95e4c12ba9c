package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/node"
)

// TestInspectFixtureFacts checks inspect --json against the facts measured on the CoreOS
// fixtures (spec section 8).
func TestInspectFixtureFacts(t *testing.T) {
	cases := []struct {
		name                 string
		volumeID, arch       string
		ignOffset, ignLength int64
		ignSource            string
		kargsSource          string
		kargsOffsets         []int64
		kargsSize            int
		defaultKargs         string
		minimalMethod        string
		network              bool
	}{
		{"embed-areas-2020-09.iso", "rhcos-46.82.202112161843-0", "x86_64", 92160, 262144, "images/ignition.img", "", nil, 0, "", "rebuild", false},
		{"embed-areas-2021-01.iso", "rhcos-47.84.202112162337-0", "x86_64", 96256, 262144, "images/ignition.img", "coreKarg header", []int64{94026, 365415}, 1131,
			"random.trust_cpu=on coreos.liveiso=rhcos-47.84.202112162337-0 ignition.firstboot ignition.platform.id=metal", "rebuild", false},
		{"embed-areas-2021-12.iso", "fedora-coreos-35.20211216.dev.0", "x86_64", 161792, 262144, "images/ignition.img", "coreos/kargs.json", []int64{139086, 431050}, 1139, "", "miniso.dat", true},
		{"embed-areas-2023-07.x86_64.iso", "fedora-coreos-38.20230718.dev.0", "x86_64", 139264, 262144, "coreos/igninfo.json", "coreos/kargs.json", []int64{137037, 408522}, 1139,
			"mitigations=auto,nosmt coreos.liveiso=fedora-coreos-38.20230718.dev.0 ignition.firstboot ignition.platform.id=metal", "miniso.dat", true},
		{"embed-areas-2023-07.s390x.iso", "fedora-coreos-38.20230718.dev.0", "s390x", 203776, 262144, "coreos/igninfo.json", "coreos/kargs.json", []int64{138368}, 896, "", "miniso.dat", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r node.Report
			if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", fixtures.File(t, c.name)), &r); err != nil {
				t.Fatal(err)
			}
			if r.VolumeID != c.volumeID || r.Arch != c.arch {
				t.Errorf("volume %q arch %q", r.VolumeID, r.Arch)
			}
			a := r.Ignition
			if a.Offset != c.ignOffset || a.Length != c.ignLength || a.Source != c.ignSource || len(a.Members) != 0 || a.BytesUsed != 0 {
				t.Errorf("ignition area %+v", a)
			}
			if c.kargsSource == "" {
				if r.Kargs != nil {
					t.Errorf("kargs %+v on an ISO without karg areas", r.Kargs)
				}
			} else {
				if r.Kargs == nil {
					t.Fatal("no kargs reported")
				}
				var offs []int64
				for _, ar := range r.Kargs.Areas {
					offs = append(offs, ar.Offset)
				}
				if r.Kargs.Source != c.kargsSource || r.Kargs.Size != c.kargsSize || !equalInts(offs, c.kargsOffsets) || r.Kargs.Current != r.Kargs.Default {
					t.Errorf("kargs %+v", r.Kargs)
				}
				if c.defaultKargs != "" && r.Kargs.Default != c.defaultKargs {
					t.Errorf("default kargs %q", r.Kargs.Default)
				}
			}
			if !r.MinimalISO.Available || r.MinimalISO.Method != c.minimalMethod {
				t.Errorf("minimal ISO %+v", r.MinimalISO)
			}
			if (r.Features != nil && r.Features.LiveInitrdNetwork) != c.network {
				t.Errorf("features %+v", r.Features)
			}
		})
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestInspectShowsEmbeddedMembers: after an embed, inspect lists the members and how much of
// the area they use, and says a minimal ISO can no longer be extracted.
func TestInspectShowsEmbeddedMembers(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	mustSno(t, []byte(smallConfig), "ignition", "embed", iso)
	var r node.Report
	if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", iso), &r); err != nil {
		t.Fatal(err)
	}
	m := r.Ignition.Members
	if len(m) != 1 || m[0].Path != "config.ign" || m[0].Size != len(smallConfig) {
		t.Fatalf("members %+v", m)
	}
	if r.Ignition.BytesUsed == 0 || r.Ignition.BytesUsed > 1024 {
		t.Fatalf("bytes used %d for a tiny config", r.Ignition.BytesUsed)
	}
	if r.MinimalISO.Available {
		t.Fatal("minimal ISO said available on a customized ISO")
	}
	text := string(mustSno(t, nil, "inspect", iso))
	for _, want := range []string{"config.ign (35 bytes)", "fedora-coreos-38.20230718.dev.0", "`sno-iso reset` undoes the customizations"} {
		if !strings.Contains(text, want) {
			t.Errorf("inspect text lacks %q:\n%s", want, text)
		}
	}
}

// TestInspectMinimalISO: a minimal ISO has no rootfs to leave out, and inspect says so.
func TestInspectMinimalISO(t *testing.T) {
	iso := fixtures.File(t, "embed-areas-2023-07.x86_64.iso")
	minimal := filepath.Join(t.TempDir(), "minimal.iso")
	mustSno(t, nil, "minimal", iso, minimal)
	var r node.Report
	if err := json.Unmarshal(mustSno(t, nil, "inspect", "--json", minimal), &r); err != nil {
		t.Fatal(err)
	}
	if r.MinimalISO.Available || !strings.Contains(r.MinimalISO.Reason, "minimal ISO already") {
		t.Fatalf("minimal ISO report %+v", r.MinimalISO)
	}
}
