package localgrpc_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeSnippetsAreExamples checks that every Go snippet of every
// Markdown file of the repository (the README, docs/, the examples'
// READMEs) is, line for line, part of an Example of the library or of
// cmd/examples, so that the snippets compile as written and follow the
// API when it changes.
func TestReadmeSnippetsAreExamples(t *testing.T) {
	files, err := filepath.Glob("*example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("*/*example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	inCmd, err := filepath.Glob("cmd/examples/*/*example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var examples []string
	for _, f := range slices.Concat(files, more, inCmd) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, normalize(string(b)))
	}
	docs := markdownFiles(t)
	if !slices.Contains(docs, "README.md") {
		t.Fatalf("no README.md among the Markdown files %q", docs)
	}
	snippet := regexp.MustCompile("(?s)```go\n(.*?)```")
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		snippets := snippet.FindAllStringSubmatch(string(b), -1)
		if doc == "README.md" && len(snippets) == 0 {
			t.Error("the README has no Go snippet")
		}
		for _, s := range snippets {
			code := normalize(s[1])
			if !slices.ContainsFunc(examples, func(e string) bool { return strings.Contains(e, code) }) {
				t.Errorf("this snippet of %s is in no Example (make it one, line for line):\n%s", doc, s[1])
			}
		}
	}
}

// markdownFiles lists the repository's Markdown files, but those of
// generated code, of hidden directories and of testdata.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var docs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "gen" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".md") {
			docs = append(docs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// normalize drops the indentation and the blank lines of Go code.
func normalize(code string) string {
	var b strings.Builder
	for line := range strings.Lines(code) {
		if line = strings.TrimSpace(line); line != "" {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
