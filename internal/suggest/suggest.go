// Package suggest finds the name a user most likely meant when they mistyped one: a command,
// an option or a configuration key.
package suggest

import "strings"

// maxDistance is the most edits a suggestion may be away: two typos, or a swap and a typo.
const maxDistance = 2

// minPrefix is the shortest beginning of a name that Nearest takes for the whole name.
const minPrefix = 3

// Nearest returns the candidate closest to name: one equal to it up to case, else the one
// fewest edits away (a swap of neighbouring letters counts as one edit), provided it is at
// most two edits away and fewer than half of name's letters: a short name is too easy to be
// near by chance. Failing that, the only candidate that name begins (rotate for
// rotate-secret), when name has at least three letters. It returns "" when nothing is
// close; ties go to the earlier candidate.
func Nearest(name string, candidates []string) string {
	lower := strings.ToLower(name)
	best, bestDistance := "", min(maxDistance+1, (len(name)+1)/2)
	var extensions []string
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
		if d := distance(lower, strings.ToLower(c)); d < bestDistance {
			best, bestDistance = c, d
		}
		if len(name) >= minPrefix && strings.HasPrefix(strings.ToLower(c), lower) {
			extensions = append(extensions, c)
		}
	}
	if best == "" && len(extensions) == 1 {
		return extensions[0]
	}
	return best
}

// distance is the optimal string alignment distance between two short strings: the
// insertions, deletions, substitutions and swaps of neighbouring bytes that turn a into b.
func distance(a, b string) int {
	// rows[i][j] is the distance between a[:i] and b[:j]; only three rows are kept.
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
