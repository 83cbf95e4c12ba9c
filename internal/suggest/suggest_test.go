package suggest

import "testing"

func TestNearest(t *testing.T) {
	commands := []string{"build", "ignition", "inspect", "kargs", "minimal", "network", "reset", "serve"}
	for _, c := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"bulid", commands, "build"},    // a swap
		{"biuld", commands, "build"},    // a swap
		{"bild", commands, "build"},     // a letter left out
		{"Build", commands, "build"},    // case
		{"serv", commands, "serve"},     // cut short
		{"netwrk", commands, "network"}, // a letter left out
		{"embedd", []string{"embed", "show", "remove"}, "embed"},
		{"ignitoin", []string{"iso", "ignition", "config", "install-config"}, "ignition"},
		{"instal-config", []string{"ignition", "config", "install-config"}, "install-config"},
		{"frobnicate", commands, ""},             // nothing near
		{"x", []string{"o", "f"}, ""},            // one letter is near everything
		{"ab", []string{"ba", "a"}, ""},          // so are two
		{"abc", []string{"abd"}, "abd"},          // one edit in three letters is a typo
		{"abcd", []string{"badc"}, ""},           // two edits in four letters make another word
		{"abcdef", []string{"badcef"}, "badcef"}, // two swaps in six are two typos
		{"abcde", []string{"vwxyz"}, ""},         // five edits
		{"", commands, ""},
		{"rotate", []string{"urls", "rotate-secret"}, "rotate-secret"},      // the only name it begins
		{"Rotate", []string{"urls", "rotate-secret"}, "rotate-secret"},      // in any case
		{"in", commands, ""},                                                // too short to stand for a name
		{"ins", []string{"inspect", "install-config"}, ""},                  // begins two
		{"live-karg", []string{"live-karg-append", "live-karg-delete"}, ""}, // begins two
		{"inspectt", []string{"inspect", "inspectttttt"}, "inspect"},        // an edit is nearer
	} {
		if got := Nearest(c.name, c.candidates); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"abc", "abc", 0},
		{"abc", "acb", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3},
	} {
		if got := distance(c.a, c.b); got != c.want {
			t.Errorf("distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := distance(c.b, c.a); got != c.want {
			t.Errorf("distance(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}
