package coreos

import (
	"fmt"
	"strings"
)

// shellQuote makes s one literal word for sh: it is put in single quotes, and each single
// quote inside it closes the quoting, adds an escaped quote and reopens it.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// splitShellWords splits one line of a shell script into words the way sh would for a
// simple command: single and double quotes, backslash escapes, and a # comment at the
// start of a word. Expansions ($x, $(...)) are kept as literal text: the scripts read here
// put literal values on the coreos-installer command line.
func splitShellWords(line string) ([]string, error) {
	var (
		words   []string
		word    strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	for _, r := range line {
		switch {
		case escaped:
			// Inside double quotes a backslash escapes only $ ` " and itself.
			if quote == '"' && !strings.ContainsRune("$`\"\\", r) {
				word.WriteRune('\\')
			}
			word.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				word.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				word.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return words, nil
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}
