package input

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	big := filepath.Join(dir, "big")
	os.WriteFile(small, []byte("1234"), 0o600)
	os.WriteFile(big, []byte(strings.Repeat("x", 2049)), 0o600)

	if got, err := ReadFile(small, 4, "a test file"); err != nil || string(got) != "1234" {
		t.Errorf("at the limit: %q, %v", got, err)
	}
	_, err := ReadFile(big, 2048, "a test file")
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != 2048 || err.Error() != big+" is larger than 2 KiB: that is not a test file" {
		t.Errorf("past the limit: %v", err)
	}
	if _, err := ReadFile(dir, 4, "a test file"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	if got, err := ReadFile(os.DevNull, 4, "a test file"); err != nil || len(got) != 0 {
		t.Errorf("/dev/null: %q, %v", got, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 4, "a test file"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{16 << 20: "16 MiB", 1 << 20: "1 MiB", 3 << 10: "3 KiB", 1000: "1000 bytes", 1025: "1025 bytes"} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
