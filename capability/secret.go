package capability

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sno-iso/sno-iso/internal/input"
	"github.com/sno-iso/sno-iso/isobuilder"
)

// SecretFileName is the secret's file in the nodes directory when no other is given. A dot
// file is never listed as a node.
const SecretFileName = ".sno-iso-secret"

// SecretPath is where the secret of the nodes directory nodesDir is kept when no other file
// is given: the one place `serve` creates it and `serve urls`, `serve rotate-secret` and
// `bmc boot` read it.
func SecretPath(nodesDir string) string {
	return filepath.Join(nodesDir, SecretFileName)
}

// secretHeader is the first line of a secret file, naming its format.
const secretHeader = "sno-iso-secret v1"

// Key sizes: 32 random bytes are written; shorter keys than 16 bytes are refused, as the
// tokens would be guessable from their key, and longer than 64 hold no more strength.
const (
	secretKeySize    = 32
	minSecretKeySize = 16
	maxSecretKeySize = 64
	maxSecretFile    = 4096
)

// ErrBadSecret is wrapped by the errors about a secret file that cannot be used.
var ErrBadSecret = errors.New("not a usable sno-iso secret")

// ErrNoSecret is wrapped when a secret file does not exist.
var ErrNoSecret = errors.New("no sno-iso secret")

// Secret is the key from which the capability tokens are derived and, during a rotation's
// grace period, the key it replaced: URLs made with it keep working until PreviousUntil.
type Secret struct {
	Key           []byte
	Previous      []byte
	PreviousUntil time.Time
	// Older are the keys of earlier rotations still in their grace period: a rotation
	// does not cut short the grace an earlier one gave.
	Older []PreviousKey
}

// PreviousKey is a replaced key and the time until which its URLs keep working.
type PreviousKey struct {
	Key   []byte
	Until time.Time
}

// maxOlderKeys bounds Secret.Older: rotations more frequent than that within a grace period
// drop the oldest key first.
const maxOlderKeys = 7

// NewSecret returns a secret with a fresh random key.
func NewSecret() (*Secret, error) {
	key := make([]byte, secretKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return &Secret{Key: key}, nil
}

// Rotated returns a new secret whose previous key is s's, honoured for grace after now.
// The previous key is kept even with a zero grace: it tells servers that the rotation
// chose its grace period, so theirs for a file replaced by hand does not apply. Keys of
// earlier rotations keep their own grace, cut to this one's: a second rotation never ends
// the first one's grace early, and one with no grace (a key that leaked) ends them all.
func (s *Secret) Rotated(now time.Time, grace time.Duration) (*Secret, error) {
	next, err := NewSecret()
	if err != nil {
		return nil, err
	}
	next.Previous, next.PreviousUntil = s.Key, now.Add(grace).UTC().Truncate(time.Second)
	// The keys s still honours keep their own grace, newest first, up to maxOlderKeys.
	if s.Previous != nil {
		next.Older = append(next.Older, PreviousKey{s.Previous, s.PreviousUntil})
	}
	next.Older = append(next.Older, s.Older...)
	for i := range next.Older {
		if next.Older[i].Until.After(next.PreviousUntil) {
			next.Older[i].Until = next.PreviousUntil
		}
	}
	next.Older = slices.DeleteFunc(next.Older, func(k PreviousKey) bool { return !now.Before(k.Until) })
	next.Older = next.Older[:min(len(next.Older), maxOlderKeys)]
	return next, nil
}

// MarshalText writes the file format:
//
//	sno-iso-secret v1
//	key <base64url key>
//	previous <base64url key> <RFC 3339 time until which it is honoured>
//
// The previous line is there only during a rotation's grace period; more previous lines
// follow for the older keys still in theirs.
func (s *Secret) MarshalText() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(secretHeader + "\n")
	b.WriteString("key " + base64.RawURLEncoding.EncodeToString(s.Key) + "\n")
	if s.Previous != nil {
		b.WriteString("previous " + base64.RawURLEncoding.EncodeToString(s.Previous) + " " + s.PreviousUntil.UTC().Format(time.RFC3339) + "\n")
		for _, k := range s.Older {
			b.WriteString("previous " + base64.RawURLEncoding.EncodeToString(k.Key) + " " + k.Until.UTC().Format(time.RFC3339) + "\n")
		}
	}
	return b.Bytes(), nil
}

// ParseSecret reads the file format MarshalText writes. Errors wrap ErrBadSecret.
func ParseSecret(raw []byte) (*Secret, error) {
	if len(raw) > maxSecretFile {
		return nil, fmt.Errorf("%w: %d bytes, more than a secret file holds", ErrBadSecret, len(raw))
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != secretHeader {
		return nil, fmt.Errorf("%w: the first line is not %q", ErrBadSecret, secretHeader)
	}
	s := &Secret{}
	for line := 2; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		var err error
		switch {
		case fields[0] == "key" && len(fields) == 2 && s.Key == nil:
			s.Key, err = parseSecretKey(fields[1])
		case fields[0] == "previous" && len(fields) == 3 && s.Previous == nil:
			if s.Previous, err = parseSecretKey(fields[1]); err == nil {
				s.PreviousUntil, err = parseUntil(fields[2])
			}
		case fields[0] == "previous" && len(fields) == 3 && len(s.Older) < maxOlderKeys:
			var k PreviousKey
			if k.Key, err = parseSecretKey(fields[1]); err == nil {
				k.Until, err = parseUntil(fields[2])
			}
			s.Older = append(s.Older, k)
		default:
			err = fmt.Errorf("expected one \"key KEY\" and at most %d \"previous KEY UNTIL\"", 1+maxOlderKeys)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrBadSecret, line, err)
		}
	}
	if s.Key == nil {
		return nil, fmt.Errorf("%w: no key line", ErrBadSecret)
	}
	return s, nil
}

func parseSecretKey(field string) ([]byte, error) {
	key, err := base64.RawURLEncoding.Strict().DecodeString(field)
	if err != nil {
		return nil, fmt.Errorf("the key is not unpadded base64url: %v", err)
	}
	if len(key) < minSecretKeySize || len(key) > maxSecretKeySize {
		return nil, fmt.Errorf("the key has %d bytes, not %d to %d", len(key), minSecretKeySize, maxSecretKeySize)
	}
	return key, nil
}

// parseUntil reads the end of a grace period, in UTC: a year outside 1 to 9999 could not
// be written back.
func parseUntil(field string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, field)
	if err != nil {
		return time.Time{}, err
	}
	if t = t.UTC(); t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("the time %s is out of range", field)
	}
	return t, nil
}

// ReadSecretFile reads the secret at path, a regular file (a named pipe is refused, not
// waited on). A missing file wraps ErrNoSecret; one too large to be a secret file, as any
// other unusable content, wraps ErrBadSecret.
func ReadSecretFile(path string) (*Secret, error) {
	raw, err := input.ReadFile(path, maxSecretFile, "a secret file")
	var tooLarge *input.TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", path, ErrNoSecret)
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("%w: %w", ErrBadSecret, err)
	case err != nil:
		return nil, err
	}
	s, err := ParseSecret(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// LoadOrCreateSecret reads the secret at path, or creates it with a new key. Servers
// starting together create it once: the first file linked into place wins, and the others
// read it.
func LoadOrCreateSecret(path string) (s *Secret, created bool, err error) {
	s, err = ReadSecretFile(path)
	if !errors.Is(err, ErrNoSecret) {
		return s, false, err
	}
	if s, err = NewSecret(); err != nil {
		return nil, false, err
	}
	err = writeSecretFile(path, s, false)
	if errors.Is(err, fs.ErrExist) {
		s, err = ReadSecretFile(path)
		return s, false, err
	}
	return s, err == nil, err
}

// RotateSecretFile replaces the secret at path (creating it if missing) with a new key; URLs
// made with the old key keep working for grace, for every server reading the file.
func RotateSecretFile(path string, now time.Time, grace time.Duration) error {
	old, err := ReadSecretFile(path)
	if errors.Is(err, ErrNoSecret) {
		old, err = NewSecret()
	}
	if err != nil {
		return err
	}
	next, err := old.Rotated(now, grace)
	if err != nil {
		return err
	}
	return writeSecretFile(path, next, true)
}

// writeSecretFile writes s to path atomically through an isobuilder.Stage: a 0600 temporary
// file beside path (unnamed on Linux, so a crash leaves no copy of the key), synced, then
// named path. An existing path is replaced only when replace; otherwise the error wraps
// fs.ErrExist.
func writeSecretFile(path string, s *Secret, replace bool) error {
	text, err := s.MarshalText()
	if err != nil {
		return err
	}
	stage := isobuilder.NewStage(replace)
	defer stage.Abort()
	f, err := stage.Create(path, isobuilder.SecretPerm)
	if err != nil {
		return err
	}
	if _, err := f.Write(text); err != nil {
		return err
	}
	return stage.Commit()
}
