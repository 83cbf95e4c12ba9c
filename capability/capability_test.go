package capability

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sno-iso/sno-iso/internal/fixtures"
	"github.com/sno-iso/sno-iso/internal/input"
)

// testSecretFile is a committed secret with the key bytes 0..31, so tokens are known answers.
const testSecretFile = "testdata/secret"

// The token is the documented derivation, so other tools can compute it: these answers
// come from Python's hmac module, not from this package.
func TestTokenKnownAnswers(t *testing.T) {
	secret, err := ReadSecretFile(testSecretFile)
	if err != nil {
		t.Fatal(err)
	}
	for node, want := range map[string]string{"sno": "9O8eFBoGwGZ0VHBqvfRSTA", "a": "3mSa3tC7bIgncTs34ttb8g"} {
		if got := Token(secret.Key, node); got != want {
			t.Errorf("Token(%s) = %s, want %s", node, got, want)
		}
	}
	urls := NodeURLs("https://192.0.2.1:8443/", secret, "sno")
	want := URLs{
		ISO:        "https://192.0.2.1:8443/9O8eFBoGwGZ0VHBqvfRSTA/sno.iso",
		MinimalISO: "https://192.0.2.1:8443/9O8eFBoGwGZ0VHBqvfRSTA/sno-minimal.iso",
		BootIPXE:   "https://192.0.2.1:8443/9O8eFBoGwGZ0VHBqvfRSTA/sno/boot.ipxe",
		PXEDir:     "https://192.0.2.1:8443/9O8eFBoGwGZ0VHBqvfRSTA/sno",
		Rootfs:     "https://192.0.2.1:8443/rootfs.img",
	}
	if urls != want {
		t.Errorf("NodeURLs = %+v, want %+v", urls, want)
	}
	if open := NodeURLs("http://h", nil, "sno"); open.ISO != "http://h/sno.iso" || open.PXEDir != "http://h/sno" {
		t.Errorf("open URLs: %+v", open)
	}
}

func TestParseSecret(t *testing.T) {
	s, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	until := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	rotated, _ := s.Rotated(until.Add(-time.Hour), time.Hour)
	text, _ := rotated.MarshalText()
	back, err := ParseSecret(text)
	if err != nil || !bytes.Equal(back.Key, rotated.Key) || !bytes.Equal(back.Previous, s.Key) || !back.PreviousUntil.Equal(until) {
		t.Errorf("round trip of %q: %+v, %v", text, back, err)
	}
	for _, bad := range []string{
		"", "key AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\n", secretHeader + "\n",
		secretHeader + "\nkey AAEC\n",
		secretHeader + "\nkey AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n",
		secretHeader + "\nkey AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\nkey AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\n",
		secretHeader + "\nkey AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\nprevious AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8 tomorrow\n",
		secretHeader + "\nkey AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\nsalt x\n",
	} {
		if _, err := ParseSecret([]byte(bad)); !errors.Is(err, ErrBadSecret) {
			t.Errorf("ParseSecret(%q): %v, want ErrBadSecret", bad, err)
		}
	}
}

// A secret file that is a named pipe is refused, not waited on at start.
func TestReadSecretFileRefusesNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), SecretFileName)
	fixtures.NamedPipe(t, fifo)
	if _, err := ReadSecretFile(fifo); !errors.Is(err, input.ErrNotRegular) || !strings.Contains(err.Error(), fifo) {
		t.Errorf("got %v, want the pipe refused by name", err)
	}
}

// A file far larger than a secret file is refused as one, by its path, without reading it all.
func TestReadSecretFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), SecretFileName)
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSecretFile(path); !errors.Is(err, ErrBadSecret) || !strings.Contains(err.Error(), path) {
		t.Errorf("got %v, want ErrBadSecret naming %s", err, path)
	}
}
