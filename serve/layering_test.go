package serve

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// serve composes nothing itself: node makes every byte of a node's media, with the code that
// build and pxe build run, so serve imports neither the payload's format nor the embed areas.
func TestServeComposesThroughNode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch path {
			case "github.com/sno-iso/sno-iso/initrd", "github.com/sno-iso/sno-iso/embed":
				t.Errorf("%s imports %s: ask package node for the artifact instead", f, path)
			}
		}
	}
}
