package embed

import (
	"errors"
	"strings"
	"testing"
)

// TestModifyKargsRefusesWhatGRUBMisparses: an append or a replacement holding a character GRUB
// gives a meaning to is refused naming the character, unless double quotes around a whole
// value or argument make it literal; deleting such an argument works.
func TestModifyKargsRefusesWhatGRUBMisparses(t *testing.T) {
	for _, bad := range []string{"x{", "x}", `a"b`, "a'b", `a\b`, "a$b", "${root}", "a;reboot", "a|b", "a&b", "a<b", "a>b", "#comment",
		`k="a`, `"k"=v`, `k="a"b"`, `k="$x"`, `k="a\b"`, `k;x="a"`} {
		edits := []struct{ appends, replaces []string }{{appends: []string{"ok " + bad}}}
		// k=#comment is no comment, and a replacement's new value cannot hold '='.
		if !strings.HasPrefix(bad, "#") && !strings.Contains(bad, "=") {
			edits = append(edits, struct{ appends, replaces []string }{replaces: []string{"k=v=" + bad}})
		}
		for _, edit := range edits {
			_, err := ModifyKargs("k=v", edit.appends, nil, edit.replaces)
			var unsafe *UnsafeKargError
			if !errors.As(err, &unsafe) || !strings.ContainsRune(bad, unsafe.Char) || unsafe.Reason == "" {
				t.Errorf("%+v: got %v, want the character of %q refused", edit, err, bad)
			}
		}
	}
	got, err := ModifyKargs(`k=v a"b`, nil, []string{`a"b`}, nil)
	if err != nil || got != "k=v" {
		t.Errorf("deleting a\"b: %q, %v", got, err)
	}
	fine := "console=ttyS0,115200n8 ip=192.0.2.10::192.0.2.1:255.255.255.0:node:ens3:none:[2001:db8::1] a#b " +
		"rd.luks.options=x-y_z.w coreos.live.rootfs_url=https://h/r?t=1!*%+@~^(x) " +
		`coreos.live.rootfs_url="https://h/r?a=1&b=2;c={}|<>'" "quoted&whole" empty=""`
	if got, err := ModifyKargs("k=v", []string{fine}, nil, nil); err != nil || got != "k=v "+fine {
		t.Errorf("ordinary arguments: %q, %v", got, err)
	}
}
