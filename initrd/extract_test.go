package initrd

import (
	"strings"
	"testing"
)

func TestCheckExtractPath(t *testing.T) {
	for _, path := range []string{"/etc/adjtime", "../f", "a/../../b", "a/..", "..", "/", "//x", "a/b/../../.."} {
		if err := CheckExtractPath(path); err == nil || !strings.Contains(err.Error(), "path "+path+" contains path traversal") {
			t.Errorf("CheckExtractPath(%q) = %v, want path traversal", path, err)
		}
	}
	if err := CheckExtractPath(""); err == nil || !strings.Contains(err.Error(), "names no file") {
		t.Errorf("CheckExtractPath(\"\") = %v, want names no file", err)
	}
	for _, path := range []string{"a/..b", "..c", "d/e...", "x.nmconnection"} {
		if err := CheckExtractPath(path); err != nil {
			t.Errorf("CheckExtractPath(%q) = %v: dots that are not \"..\" are names", path, err)
		}
	}
}
