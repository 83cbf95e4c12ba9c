package capability

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSecretFileWritesLeaveOnlyTheFile creates and rotates a secret file: the directory then
// holds the file alone, 0600, with the rotated key.
func TestSecretFileWritesLeaveOnlyTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, SecretFileName)
	created, isNew, err := LoadOrCreateSecret(path)
	if err != nil || !isNew {
		t.Fatalf("LoadOrCreateSecret: new %v, %v", isNew, err)
	}
	if again, isNew, err := LoadOrCreateSecret(path); err != nil || isNew || Token(again.Key, "a") != Token(created.Key, "a") {
		t.Fatalf("a second LoadOrCreateSecret: new %v, %v, or another key", isNew, err)
	}
	if err := RotateSecretFile(path, time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	rotated, err := ReadSecretFile(path)
	if err != nil || Token(rotated.Key, "a") == Token(created.Key, "a") {
		t.Fatalf("after the rotation: %v, or the same key", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != SecretFileName {
		t.Fatalf("the directory holds %v, %v; want %s alone", entries, err, SecretFileName)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the secret file: %v, %v; want mode 0600", info, err)
	}
}
