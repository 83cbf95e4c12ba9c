package capability

import (
	"path/filepath"
	"testing"
	"time"
)

// A second rotation within the first one's grace period keeps the first one's grace: URLs of
// the oldest key work until the first rotation said, not until the second replaced it.
func TestSecondRotationKeepsTheFirstGrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	if err := RotateSecretFile(path, t0, 0); err != nil { // a first key, without grace
		t.Fatal(err)
	}
	original, err := ReadSecretFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := RotateSecretFile(path, t0, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := RotateSecretFile(path, t0.Add(time.Minute), time.Hour); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSecretFile(path)
	if err != nil {
		t.Fatal(err)
	}
	token := Token(original.Key, "n1")
	if !s.Accepts("n1", token, t0.Add(30*time.Minute)) {
		t.Error("the first rotation's grace period ended when the second rotation came")
	}
	if s.Accepts("n1", token, t0.Add(time.Hour+time.Second)) {
		t.Error("the oldest key works past its grace period")
	}
	if s.Accepts("n2", token, t0.Add(30*time.Minute)) {
		t.Error("a node's token is accepted for another node")
	}
	// A rotation with no grace, for a key that leaked, ends every earlier key at once.
	if err := RotateSecretFile(path, t0.Add(2*time.Minute), 0); err != nil {
		t.Fatal(err)
	}
	if s, err = ReadSecretFile(path); err != nil {
		t.Fatal(err)
	}
	if s.Accepts("n1", token, t0.Add(3*time.Minute)) {
		t.Error("a rotation without grace left the oldest key working")
	}
	// Keys whose grace is over are dropped from the file, and the kept ones are bounded.
	for i := range 20 {
		if err := RotateSecretFile(path, t0.Add(time.Duration(2+i)*time.Minute), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	s, err = ReadSecretFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Older); n > maxOlderKeys {
		t.Errorf("%d older keys kept, want at most %d", n, maxOlderKeys)
	}
}
