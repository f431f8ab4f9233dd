package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The run times the docs state are runtimes.go's, and no others: a
// newcomer read "about 5 minutes" in one place and "about 4" in another.
func TestRunTimesAgree(t *testing.T) {
	stated := []string{fullBenchTakes, quickBenchTakes, firstCompileTakes, testsTake}
	code, help, stderr := runCLI(t.Context(), "bench", "--help")
	if code != exitOK {
		t.Fatalf("bench --help: exit status %d: %s", code, stderr)
	}
	docs := map[string]string{"bench --help": help}
	for _, path := range []string{"../../README.md", "../../docs/cli.md", "doc.go"} {
		b, err := os.ReadFile(filepath.FromSlash(path))
		if err != nil {
			t.Fatal(err)
		}
		docs[path] = string(b)
	}
	figure := regexp.MustCompile(`about \d+(?:\.\d+)?(?: to \d+(?:\.\d+)?)? (?:minutes?|seconds?)`)
	for path, text := range docs {
		// A figure may wrap, in a comment too.
		text = strings.Join(strings.Fields(strings.ReplaceAll(text, "\n//", "\n")), " ")
		for _, f := range figure.FindAllString(text, -1) {
			if !slices.Contains(stated, f) {
				t.Errorf("%s says %q; runtimes.go states %q", path, f, stated)
			}
		}
		want := stated
		switch path {
		case "bench --help", "doc.go":
			want = []string{fullBenchTakes, quickBenchTakes}
		case "../../docs/cli.md":
			want = []string{fullBenchTakes, quickBenchTakes, firstCompileTakes}
		}
		for _, f := range want {
			if !strings.Contains(text, f) {
				t.Errorf("%s does not say %q", path, f)
			}
		}
	}
}
