package localgrpc_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeSnippetsAreExamples checks that every Go snippet of the README
// is, line for line, part of an Example of the library or of
// cmd/examples, so that the snippets compile as written and follow the API
// when it changes.
func TestReadmeSnippetsAreExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
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
	snippets := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(snippets) == 0 {
		t.Fatal("the README has no Go snippet")
	}
	for _, s := range snippets {
		code := normalize(s[1])
		found := false
		for _, e := range examples {
			if strings.Contains(e, code) {
				found = true
			}
		}
		if !found {
			t.Errorf("this README snippet is in no Example (make it one, line for line):\n%s", s[1])
		}
	}
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
