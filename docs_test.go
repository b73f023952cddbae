package main

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"
)

// The project's Markdown: every relative link names a file of the
// repository, and every #anchor a heading of the file it points into.
func TestDocsLinks(t *testing.T) {
	files := []string{"README.md", "SECURITY.md", "ARCHITECTURE.md", "CHANGELOG.md", "BENCHMARKS.md"}
	err := filepath.WalkDir("docs", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, filepath.ToSlash(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "docs/install.md") {
		t.Fatalf("the walk of docs/ found %v: it reads the wrong folder", files)
	}
	var links int
	for _, f := range files {
		n, broken := checkLinks(os.DirFS("."), f)
		links += n
		for _, b := range broken {
			t.Errorf("%s: %s", f, b)
		}
	}
	if links < 50 {
		t.Errorf("%d relative links in %d files: the pattern reads the wrong thing", links, len(files))
	}
}

// checkLinks fails a link that does not resolve. What it checks is what
// GitHub renders: a broken file and a broken anchor are both caught.
func TestCheckLinksFindsBrokenOnes(t *testing.T) {
	fsys := fstest.MapFS{
		"a.md": {Data: []byte("# A page\n\n## The `Monocle` API: what's promised\n\n## Twice\n\n## Twice\n\n" +
			"[ok](b.md) [ok](b.md#b-section) [ok](#the-monocle-api-whats-promised) [ok](#twice-1) [ok](dir/)\n" +
			"[web](https://example.com/x.md#nowhere) `[code](nowhere.md)`\n\n```md\n[in a block](nowhere.md)\n```\n\n" +
			"[gone](c.md) [bad anchor](b.md#nowhere) [bad here](#twice-2) ![image](gone.png)\n\n[ref]: gone-too.md\n")},
		"b.md":       {Data: []byte("# B\n\n## B section\n\n```sh\n# Not a heading\n```\n")},
		"dir/x.yaml": {Data: []byte("x: 1\n")},
	}
	n, broken := checkLinks(fsys, "a.md")
	want := []string{
		`broken link "c.md": no such file`,
		`broken link "b.md#nowhere": b.md has no heading "nowhere"`,
		`broken link "#twice-2": a.md has no heading "twice-2"`,
		`broken link "gone.png": no such file`,
		`broken link "gone-too.md": no such file`,
	}
	if !slices.Equal(broken, want) || n != 10 {
		t.Errorf("%d links, broken:\n%s\nwant 10, broken:\n%s", n, strings.Join(broken, "\n"), strings.Join(want, "\n"))
	}
	if _, broken := checkLinks(fsys, "b.md"); len(broken) != 0 {
		t.Errorf("b.md: %v", broken)
	}
}

// A reader's walk from the README's top to the end of its Quickstart, to a
// first Monocle, is under 300 words of prose: code blocks do not count, a
// link counts as its text.
func TestReadmeWalkIsShort(t *testing.T) {
	readme := readFile(t, "README.md")
	_, after, ok := strings.Cut(readme, "\n## Quickstart\n")
	if !ok {
		t.Fatal("README.md has no ## Quickstart")
	}
	end := len(readme) - len(after)
	if i := strings.Index(after, "\n## "); i >= 0 {
		end += i
	} else {
		end = len(readme)
	}
	walk := readme[:end]
	if !strings.Contains(walk, "kubectl port-forward") {
		t.Errorf("the Quickstart does not end at the web UI (no kubectl port-forward)")
	}
	words := proseWords(walk)
	t.Logf("%d words of prose from the README's top to the end of its Quickstart", words)
	if words >= 300 {
		t.Errorf("the README's walk to a first Monocle has %d words of prose, want under 300", words)
	}
	if got := proseWords("# T\n\nOne [two](x.md) `three`.\n\n```sh\nnot counted at all\n```\n- four\n"); got != 5 {
		t.Errorf("proseWords counts %d words in a sample of 5", got)
	}
}

var (
	fence      = regexp.MustCompile("(?ms)^[ \t]*```.*?^[ \t]*```[ \t]*$")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	inlineLink = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	heading    = regexp.MustCompile(`(?m)^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// proseWords counts the words of Markdown outside its fenced code blocks,
// each link as its text: what holds a letter or a digit (not a list's
// bullet, a heading's #).
func proseWords(md string) int {
	md = fence.ReplaceAllString(md, "")
	md = inlineLink.ReplaceAllString(md, "$1")
	var n int
	for _, w := range strings.Fields(md) {
		if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0 {
			n++
		}
	}
	return n
}

// checkLinks returns how many relative links the Markdown file name holds,
// and why each broken one is.
func checkLinks(fsys fs.FS, name string) (int, []string) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return 0, []string{err.Error()}
	}
	text := codeSpan.ReplaceAllString(fence.ReplaceAllString(string(b), ""), "")
	var targets []string
	for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
		targets = append(targets, m[2])
	}
	for _, m := range refLink.FindAllStringSubmatch(text, -1) {
		targets = append(targets, m[1])
	}
	var n int
	var broken []string
	for _, target := range targets {
		if scheme.MatchString(target) {
			continue
		}
		n++
		file, anchor, _ := strings.Cut(target, "#")
		into := name
		if file != "" {
			into = path.Clean(path.Join(path.Dir(name), file))
			if _, err := fs.Stat(fsys, into); err != nil {
				broken = append(broken, "broken link "+strconv.Quote(target)+": no such file")
				continue
			}
		}
		if anchor == "" {
			continue
		}
		md, err := fs.ReadFile(fsys, into)
		if err != nil || !slices.Contains(headingSlugs(string(md)), anchor) {
			broken = append(broken, "broken link "+strconv.Quote(target)+": "+into+" has no heading "+strconv.Quote(anchor))
		}
	}
	return n, broken
}

// headingSlugs are the anchors GitHub gives a file's headings: the text
// lowercased, without its punctuation, spaces as hyphens; a repeated one
// gets -1, -2, ...
func headingSlugs(md string) []string {
	seen := map[string]int{}
	var slugs []string
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(md, ""), -1) {
		text := inlineLink.ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r), unicode.IsNumber(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		slug := b.String()
		if k := seen[slug]; k > 0 {
			slugs = append(slugs, slug+"-"+strconv.Itoa(k))
		} else {
			slugs = append(slugs, slug)
		}
		seen[slug]++
	}
	return slugs
}
