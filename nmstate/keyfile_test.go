package nmstate

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// profile is a keyfile read as NetworkManager reads one: sections of key=value settings,
// compared by meaning, not by bytes (order and blank lines do not matter).
type profile map[string]map[string]string

func readProfile(t testing.TB, data []byte) profile {
	t.Helper()
	p := profile{}
	var cur map[string]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			name := line[1 : len(line)-1]
			if p[name] == nil {
				p[name] = map[string]string{}
			}
			cur = p[name]
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || cur == nil {
				t.Fatalf("not a keyfile line: %q", line)
			}
			cur[k] = v
		}
	}
	return p
}

// get returns a setting, "" when it is absent.
func (p profile) get(section, key string) string { return p[section][key] }

func render(t testing.TB, doc string) map[string]profile {
	t.Helper()
	d, err := Parse("test.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]profile{}
	for _, k := range d.Keyfiles() {
		out[k.Name] = readProfile(t, k.Data)
	}
	return out
}
