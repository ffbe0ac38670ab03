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
	stand := embedtest.Start()
	defer stand.Close()
	dir := t.TempDir()
	set := "# source: Pets\n## Q: are dogs allowed?\nDogs are welcome in the garden.\n## Q: when do you open?\nThe shop opens at nine.\n"
	if err := os.WriteFile(filepath.Join(dir, "shop.md"), []byte(set), 0o600); err != nil {
		t.Fatal(err)
	}
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
