package capability

import (
	"os/exec"
	"strings"
	"testing"
)

// The commands that only print or follow a node's URL (serve urls, bmc boot) link this
// package, not the HTTP server and its metrics.
func TestCapabilityLinksNoServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for dep := range strings.FieldsSeq(string(out)) {
		if dep == "github.com/sno-iso/sno-iso/serve" || strings.HasPrefix(dep, "github.com/prometheus/") {
			t.Errorf("capability depends on %s", dep)
		}
	}
}
