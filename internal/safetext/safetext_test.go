package safetext

import "testing"

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"eth0.nmconnection":          "eth0.nmconnection",
		"a name with spaces":         "a name with spaces",
		"café":                       "café",
		"evil\x1b[2J":                `"evil\x1b[2J"`,
		"two\nlines":                 `"two\nlines"`,
		"cr\rover":                   `"cr\rover"`,
		"tab\there":                  `"tab\there"`,
		"right-to-left \u202egnp.sh": `"right-to-left \u202egnp.sh"`,
		"bad utf8 \xff":              `"bad utf8 \xff"`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %s, want %s", in, got, want)
		}
	}
}

// FuzzEscape checks the property that matters: whatever the input, the output holds no
// control or format character, and printable input comes back unchanged.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"plain", "a\nb", "\x1b]0;t\x07", "\u202e", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		for _, r := range out {
			if notPrintable(r) {
				t.Fatalf("Escape(%q) = %q holds %U", s, out, r)
			}
		}
		if out != s && out[0] != '"' {
			t.Fatalf("Escape(%q) = %q changed printable text", s, out)
		}
	})
}
