package download

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
)

// ParseSHA256Sums reads a sha256sum.txt as mirrors publish it (what `sha256sum` prints:
// "<64 hex digits>  <name>" lines, "*<name>" in binary mode) into a map from file name to
// lower-case digest. Blank lines are skipped; anything else malformed is an error naming the line.
func ParseSHA256Sums(data []byte) (map[string]string, error) {
	sums := make(map[string]string)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		digest, name, ok := strings.Cut(text, " ")
		if !ok || !IsSHA256(digest) {
			return nil, fmt.Errorf("line %d: want \"<64 hex digits>  <name>\", got %q", line, text)
		}
		name = strings.TrimPrefix(name, " ")
		name = strings.TrimPrefix(name, "*")
		if name == "" {
			return nil, fmt.Errorf("line %d: no file name after the digest", line)
		}
		if prev, dup := sums[name]; dup && prev != strings.ToLower(digest) {
			return nil, fmt.Errorf("line %d: %s is listed twice with different digests", line, name)
		}
		sums[name] = strings.ToLower(digest)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return sums, nil
}

// IsSHA256 reports whether s is a sha256 digest: 64 hex digits, in either case.
func IsSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
