package initrd

import (
	"strings"
	"testing"
)

func TestPathsSortedByteWise(t *testing.T) {
	got := filesOf("b", "", "a/b", "", "A", "", "a-b", "", "a", "", "é", "").Paths()
	want := []string{"A", "a", "a-b", "a/b", "b", "é"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Paths() = %q, want %q", got, want)
	}
}

func TestIsNetworkFile(t *testing.T) {
	for path, want := range map[string]bool{
		NetworkDir + "/eth0.nmconnection":    true,
		NetworkDir + "/sub/dir/x":            true, // '*' in the glob matches '/'
		NetworkDir:                           false,
		"etc/coreos-firstboot-networkX/eth0": false,
		"/" + NetworkDir + "/eth0":           false,
		IgnitionPath:                         false,
	} {
		if got := IsNetworkFile(path); got != want {
			t.Errorf("IsNetworkFile(%q) = %v, want %v", path, got, want)
		}
	}
}
