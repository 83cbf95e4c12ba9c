package embed

import (
	"strings"
	"testing"
)

const fcosKargs = "coreos.liveiso=fedora-coreos-38 ignition.firstboot ignition.platform.id=metal"

func TestModifyKargs(t *testing.T) {
	cases := []struct {
		name                       string
		current                    string
		appends, deletes, replaces []string
		want                       string
	}{
		{"append", fcosKargs, []string{"foobar=oldval", "dodo"}, nil, nil, fcosKargs + " foobar=oldval dodo"},
		{"append to nothing", "", []string{"a"}, nil, nil, "a"},
		{"append is trimmed", "a", []string{"  b\t"}, nil, nil, "a b"},
		{"delete", fcosKargs + " foobar=oldval dodo", nil, []string{"foobar=oldval", "dodo"}, nil, fcosKargs},
		{"delete first karg", "a b c", nil, []string{"a"}, nil, "b c"},
		{"delete is exact, not a prefix", "foo=bar foo", nil, []string{"foo"}, nil, "foo=bar"},
		{"delete absent karg", "a b", nil, []string{"c"}, nil, "a b"},
		{"delete a sequence", "a b c", nil, []string{"a b"}, nil, "c"},
		{"delete removes every copy that is not adjacent", "x a x b x", nil, []string{"x"}, nil, "a b"},
		{"adjacent copies lose one per pass", "a a", nil, []string{"a"}, nil, "a"},
		{"delete is trimmed", "a b", nil, []string{" b "}, nil, "a"},
		{"deletes run before appends", "a", []string{"b"}, []string{"b"}, nil, "a b"},
		{"replace", "foobar=oldval dodo", nil, nil, []string{"foobar=oldval=newval"}, "foobar=newval dodo"},
		{"replace needs the old value", "foobar=other", nil, nil, []string{"foobar=oldval=newval"}, "foobar=other"},
		{"replace matches whole kargs", "xfoobar=oldval", nil, nil, []string{"foobar=oldval=newval"}, "xfoobar=oldval"},
		{"replaces run after appends", "a", []string{"k=1"}, nil, []string{"k=1=2"}, "a k=2"},
		{"replace in the customize example", "ignition.platform.id=metal", []string{"foo"}, nil, []string{"ignition.platform.id=metal=bar"}, "ignition.platform.id=bar foo"},
		{"all three", "a k=1 b", []string{"c"}, []string{"b"}, []string{"k=1=2"}, "a k=2 c"},
		{"no edits keep the kargs, trimmed", "  a b ", nil, nil, nil, "a b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ModifyKargs(c.current, c.appends, c.deletes, c.replaces)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("ModifyKargs(%q, +%q, -%q, ~%q) = %q, want %q", c.current, c.appends, c.deletes, c.replaces, got, c.want)
			}
		})
	}
}

func TestModifyKargsRejects(t *testing.T) {
	cases := []struct {
		name                       string
		appends, deletes, replaces []string
		want                       string
	}{
		{"replace without values", nil, nil, []string{"foo"}, "format should be: KEY=OLD=NEW"},
		{"replace without new value", nil, nil, []string{"foo=bar"}, "format should be: KEY=OLD=NEW"},
		{"replace with an empty key", nil, nil, []string{"=a=b"}, "format should be: KEY=OLD=NEW"},
		{"replace with an empty old value", nil, nil, []string{"a==b"}, "format should be: KEY=OLD=NEW"},
		{"replace with an empty new value", nil, nil, []string{"a=b="}, "format should be: KEY=OLD=NEW"},
		{"replace with a fourth part", nil, nil, []string{"a=b=c=d"}, "format should be: KEY=OLD=NEW"},
		{"newline in an append", []string{"a\nsearch --set root"}, nil, nil, "control character"},
		{"NUL in a delete", nil, []string{"a\x00"}, nil, "control character"},
		{"trailing newline in a replace", nil, nil, []string{"a=b=c\n"}, "control character"},
		{"invalid UTF-8", []string{"a\xff"}, nil, nil, "UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ModifyKargs("a b", c.appends, c.deletes, c.replaces)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ModifyKargs = %q, %v; want an error mentioning %q", got, err, c.want)
			}
		})
	}
}
