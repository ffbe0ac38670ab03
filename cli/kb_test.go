package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/embedtest"
)

func TestKBEvalBuiltinSet(t *testing.T) {
	out, _, err := run(t, "", "kb", "eval")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "recall@3") || !regexpLine(out, "all", "lexical") || regexpLine(out, "all", "hybrid") {
		t.Errorf("without embeddings, want only the lexical rows:\n%s", out)
	}
}

func TestKBEvalWithEmbeddingsAndOwnSet(t *testing.T) {
	stand, dir := shopSet(t)
	out, _, err := run(t, "", "kb", "eval", "--set", dir, "--embeddings-url", stand.BaseURL(), "--embeddings-model", "m", "--misses")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"lexical", "vector", "hybrid"} {
		if !regexpLine(out, "shop", mode) {
			t.Errorf("no %s row for the set:\n%s", mode, out)
		}
	}
	if stand.Inputs() == 0 {
		t.Error("the embeddings endpoint was not called")
	}
	if _, _, err := run(t, "", "kb", "eval", "--embeddings-url", stand.BaseURL()); err == nil {
		t.Error("--embeddings-url without --embeddings-model was accepted")
	}
}

// TestKBEvalFusions: each --fusion gets its own hybrid row, named as it was given, on one
// embedding of the set; a bad fusion, or one without embeddings, is refused by name.
func TestKBEvalFusions(t *testing.T) {
	stand, dir := shopSet(t)
	args := []string{"kb", "eval", "--set", dir, "--embeddings-url", stand.BaseURL(), "--embeddings-model", "m"}
	out, _, err := run(t, "", append(args, "--fusion", "linear:0.3", "--fusion", "rrf:0.5")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"lexical", "vector", "hybrid:linear:0.3", "hybrid:rrf:0.5:60"} {
		if !regexpLine(out, "shop", mode) {
			t.Errorf("no %s row:\n%s", mode, out)
		}
	}
	if regexpLine(out, "shop", "hybrid") {
		t.Errorf("the server's fusion was measured too, though fusions were given:\n%s", out)
	}
	if got := stand.Inputs(); got != 3 { // one chunk and two questions, embedded once
		t.Errorf("%d texts embedded, want 3", got)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(args, "--fusion", "rrf:0.5:0"), "K must be"},
		{append(args, "--fusion", "max:0.5"), `unknown method "max"`},
		{[]string{"kb", "eval", "--set", dir, "--fusion", "linear:0.5"}, "--fusion needs --embeddings-url"},
	} {
		if _, _, err := run(t, "", c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one saying %q", c.args, err, c.want)
		}
	}
}

// shopSet is an embeddings stand-in and a one-source evaluation set of two questions
// ("shop"), whose source makes one chunk.
func shopSet(t *testing.T) (*embedtest.Server, string) {
	t.Helper()
	stand := embedtest.Start()
	t.Cleanup(stand.Close)
	dir := t.TempDir()
	set := "# source: Pets\n## Q: are dogs allowed?\nDogs are welcome in the garden.\n## Q: when do you open?\nThe shop opens at nine.\n"
	if err := os.WriteFile(filepath.Join(dir, "shop.md"), []byte(set), 0o600); err != nil {
		t.Fatal(err)
	}
	return stand, dir
}

// regexpLine reports whether some line of out starts with the two words, in order.
func regexpLine(out, first, second string) bool {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == first && f[1] == second {
			return true
		}
	}
	return false
}

// TestKBEvalPublished: a question whose words are only in the question itself is answered
// when the set is indexed as published (the question on its line before its answer), and
// not when only the answers are indexed.
func TestKBEvalPublished(t *testing.T) {
	dir := t.TempDir()
	set := "# source: Grounds\n## Q: where can I park my bicycle?\nRacks stand by the north gate.\n" +
		"# source: Shop\n## Q: when do you open?\nThe shop opens at nine in the morning.\n"
	if err := os.WriteFile(filepath.Join(dir, "grounds.md"), []byte(set), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string // recall@1 of the set's lexical row
	}{
		{nil, "0.500"},
		{[]string{"--published"}, "1.000"},
	} {
		out, _, err := run(t, "", append([]string{"kb", "eval", "--set", dir}, c.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= 4 && f[0] == "grounds" && f[1] == "lexical" {
				got = f[3]
			}
		}
		if got != c.want {
			t.Errorf("kb eval %v: lexical recall@1 %q, want %s:\n%s", c.args, got, c.want, out)
		}
	}
}

// TestKBEvalBadSetNamesIt: a --set that is missing, a file or a directory without a set
// is named with the flag; a missing one said only "no *.md knowledge bases found".
func TestKBEvalBadSetNamesIt(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-set")
	empty := t.TempDir()
	noQuestions := t.TempDir()
	if err := os.WriteFile(filepath.Join(noQuestions, "faq.md"), []byte("# source: hours\nWe open at nine.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "set.md")
	if err := os.WriteFile(file, []byte("# not a directory\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		missing: "--set " + missing + ": stat " + missing + ": no such file or directory",
		empty:   "--set " + empty + ": no *.md knowledge bases found (the format: docs/knowledge-bases.md, retrieval quality)",
		file:    "--set " + file + " is not a directory: give the directory that holds the set's *.md files",
		// A file without a question was measured as 0 questions, recall 0.000, exit 0.
		noQuestions: "--set " + noQuestions + ": faq.md: no question in it: a set's file holds \"# source: TITLE\" lines, each followed by \"## Q: QUESTION\" lines and their answers (the format: docs/knowledge-bases.md, retrieval quality)",
	} {
		if _, _, err := run(t, "", "kb", "eval", "--set", dir); err == nil || err.Error() != want {
			t.Errorf("--set %s: %v, want %q", dir, err, want)
		}
	}
}
