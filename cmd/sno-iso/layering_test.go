package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The command line maps flags to library calls: the formats (the embed areas, the initramfs
// archives) are reached only through node and isobuilder, never imported here.
func TestCommandImportsNoFormat(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for imp := range strings.FieldsSeq(string(out)) {
		switch imp {
		case "github.com/sno-iso/sno-iso/embed", "github.com/sno-iso/sno-iso/initrd":
			t.Errorf("cmd/sno-iso imports %s: ask node or isobuilder for what it needs", imp)
		}
	}
}
