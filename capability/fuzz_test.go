package capability

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// FuzzParseSecret reads arbitrary secret files: an error wrapping ErrBadSecret, or a secret
// whose keys are usable and which reads back the same after writing.
func FuzzParseSecret(f *testing.F) {
	f.Add([]byte(secretHeader + "\nkey AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\n"))
	f.Add([]byte(secretHeader + "\nkey AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\nprevious ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1-f4CBgoM 2030-01-02T03:04:05Z\n"))
	f.Add([]byte(secretHeader + "\r\n\nkey AAEC\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := ParseSecret(raw)
		if err != nil {
			if !errors.Is(err, ErrBadSecret) {
				t.Fatalf("%q: %v does not wrap ErrBadSecret", raw, err)
			}
			return
		}
		if len(s.Key) < minSecretKeySize || len(s.Key) > maxSecretKeySize || (s.Previous != nil && len(s.Previous) < minSecretKeySize) {
			t.Fatalf("%q: keys of %d and %d bytes accepted", raw, len(s.Key), len(s.Previous))
		}
		text, _ := s.MarshalText()
		back, err := ParseSecret(text)
		if err != nil || !bytes.Equal(back.Key, s.Key) || !bytes.Equal(back.Previous, s.Previous) || !back.PreviousUntil.Equal(s.PreviousUntil.Truncate(time.Second)) {
			t.Fatalf("%q: written as %q, read back as %+v, %v", raw, text, back, err)
		}
	})
}

// FuzzCapabilityPath checks the token segment of arbitrary paths: a path is let through
// only with the exact token of the node it names, and stands for the rest of the path.
func FuzzCapabilityPath(f *testing.F) {
	secret, err := ReadSecretFile(testSecretFile)
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range []string{"/3mSa3tC7bIgncTs34ttb8g/a.iso", "/3mSa3tC7bIgncTs34ttb8g/a/boot.ipxe", "/9O8eFBoGwGZ0VHBqvfRSTA/sno-minimal.iso", "/3mSa3tC7bIgncTs34ttb8/a.iso", "//a.iso", "/a.iso", "/x/y/z"} {
		f.Add(p)
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, p string) {
		token, node, rest := SplitPath(p)
		if !secret.Accepts(node, token, now) {
			return
		}
		if token != Token(secret.Key, node) || "/"+token+rest != p {
			t.Fatalf("%q accepted as node %q's with token %q and rest %q", p, node, token, rest)
		}
	})
}
