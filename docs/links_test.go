// Package docs_test checks the user documentation: README.md and the guides in docs/.
package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// pages returns README.md and every docs/*.md, as paths relative to this directory.
func pages(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(guides) == 0 {
		t.Fatal("no guides in docs/")
	}
	return append([]string{filepath.Join("..", "README.md")}, guides...)
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	heading    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	link       = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	linkText   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// line is one line of a page, numbered from 1.
type line struct {
	n    int
	text string
}

// prose returns the lines of a Markdown page outside fenced code blocks, in order.
func prose(text string) []line {
	var lines []line
	inFence := false
	for i, l := range strings.Split(text, "\n") {
		if fence.MatchString(l) {
			inFence = !inFence
			continue
		}
		if !inFence {
			lines = append(lines, line{i + 1, l})
		}
	}
	return lines
}

// slug is the anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens.
func slug(title string) string {
	title = linkText.ReplaceAllString(title, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a page's headings, numbered as GitHub numbers repeated ones.
func anchors(text string) map[string]bool {
	found := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(text) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l.text, -1) {
			found[m[1]] = true
		}
		m := heading.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			found[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			found[s] = true
		}
		seen[s]++
	}
	return found
}

// TestDocLinks follows every relative link of README.md and docs/*.md: the file or directory
// must exist, and an anchor must name a heading of the page it points into.
func TestDocLinks(t *testing.T) {
	texts := map[string]string{}
	read := func(path string) (string, error) {
		if text, ok := texts[path]; ok {
			return text, nil
		}
		b, err := os.ReadFile(path)
		texts[path] = string(b)
		return string(b), err
	}
	checked := 0
	for _, page := range pages(t) {
		text, err := read(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range prose(text) {
			n := l.n
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(l.text, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, anchor, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %q: %s does not exist", page, n, target, dest)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: link %q: an anchor into a file that is not Markdown", page, n, target)
					continue
				}
				destText, err := read(dest)
				if err != nil {
					t.Errorf("%s:%d: link %q: %v", page, n, target, err)
					continue
				}
				if !anchors(destText)[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", page, n, target, dest, anchor)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found: the link pattern no longer matches the pages")
	}
}

// TestDocsIndexed: every guide in docs/ is listed in the index, docs/README.md, so that a
// reader can find it.
func TestDocsIndexed(t *testing.T) {
	index, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages(t)[1:] {
		if page != "README.md" && !strings.Contains(string(index), "]("+page+")") {
			t.Errorf("docs/%s is not listed in docs/README.md: add a line for it to the index's table", page)
		}
	}
}

// TestSlug pins the anchors GitHub gives the kinds of headings the guides use.
func TestSlug(t *testing.T) {
	for title, want := range map[string]string{
		"Making single-node boot media": "making-single-node-boot-media",
		"sno.yaml":                      "snoyaml",
		"Listening and `--open`":        "listening-and---open",
		"Limits: stuck nodes, stalled clients, edited ISOs":      "limits-stuck-nodes-stalled-clients-edited-isos",
		"How BMCs and `sno-iso bmc boot` reach the Service":      "how-bmcs-and-sno-iso-bmc-boot-reach-the-service",
		"What `make test` runs":                                  "what-make-test-runs",
		"Editing in place: locks and interruptions":              "editing-in-place-locks-and-interruptions",
		"A [linked](other.md) heading":                           "a-linked-heading",
		"Health, readiness and metrics":                          "health-readiness-and-metrics",
		"The input is never changed unless you edit it in place": "the-input-is-never-changed-unless-you-edit-it-in-place",
	} {
		if got := slug(title); got != want {
			t.Errorf("slug(%q) = %q, want %q", title, got, want)
		}
	}
}
