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

// Scratch harness of the eighth round (docs/knowledge-bases.md, "The eighth round"): each
// TestScratch* prints the lexical figures of each part for each setting of one experiment.
// rust-faq's totals only are printed; its questions and misses are never read.
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

func partBases(t *testing.T, names []string) []evalset.Base {
	t.Helper()
	bases, err := evalset.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var part []evalset.Base
	for _, b := range bases {
		if slices.Contains(names, b.Name) {
			part = append(part, b)
		}
	}
	return part
}

func hits(t *testing.T, bases []evalset.Base) (int, evalset.Figures) {
	t.Helper()
	rep, err := evalset.Run(context.Background(), bases, evalset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.All[evalset.ModeLexical]
	return int(f.Recall3*float64(f.Questions) + 0.5), f
}

func measureParts(t *testing.T, label string) {
	t.Helper()
	var r3s, mrrs []string
	for _, p := range scratchParts {
		n, f := hits(t, partBases(t, p.bases))
		r3s = append(r3s, fmt.Sprint(n))
		mrrs = append(mrrs, fmt.Sprintf("%.3f", f.MRR))
	}
	t.Logf("%-44s r3 %s | mrr %s", label, strings.Join(r3s, " / "), strings.Join(mrrs, " / "))
}

func TestScratchReference(t *testing.T) { measureParts(t, "reference") }

// TestScratchNeighbours: each chunk's terms smoothed with those of its k most similar
// chunks of the base (document expansion, Tao et al. 2006).
func TestScratchNeighbours(t *testing.T) {
	if os.Getenv("SCRATCH_NBR") == "" {
		t.Skip("SCRATCH_NBR=1")
	}
	defer knowledge.SetNeighbours(0, 0, false, 0, false)
	for _, other := range []bool{false, true} {
		for _, k := range []int{1, 3, 5, 10} {
			for _, beta := range []float64{0.1, 0.25, 0.5, 1} {
				knowledge.SetNeighbours(k, beta, other, 0, false)
				measureParts(t, fmt.Sprintf("nbr k %d beta %.2f other %v", k, beta, other))
			}
		}
	}
}
