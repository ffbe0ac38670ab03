package knowledge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/knowledge/evalset"
)

// Scratch harness of the seventh round (docs/knowledge-bases.md, "The seventh round"):
// each TestScratch* prints the lexical figures of each part for each setting of one
// experiment. rust-faq's totals only are printed; its questions and misses are never read.
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

func hits(t *testing.T, bases []evalset.Base) (int, evalset.Figures, *evalset.Report) {
	t.Helper()
	rep, err := evalset.Run(context.Background(), bases, evalset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.All[evalset.ModeLexical]
	return int(f.Recall3*float64(f.Questions) + 0.5), f, rep
}

func measureParts(t *testing.T, label string) {
	t.Helper()
	var r3s, mrrs []string
	for _, p := range scratchParts {
		n, f, _ := hits(t, partBases(t, p.bases))
		r3s = append(r3s, fmt.Sprint(n))
		mrrs = append(mrrs, fmt.Sprintf("%.3f", f.MRR))
	}
	t.Logf("%-44s r3 %s | mrr %s", label, strings.Join(r3s, " / "), strings.Join(mrrs, " / "))
}

func TestScratchReference(t *testing.T) { measureParts(t, "reference") }

type qaPair struct {
	Src, Path, Q, A string
}

// trainModel1 learns p(answer term | question term) by IBM Model 1's EM (Brown et al.
// 1993) over the pairs of SCRATCH_PAIRS, a NULL word on the question side, and keeps each
// question term's top 30 translations.
func trainModel1(t *testing.T, path string, answerTerms, iters int, pooled bool, minLift float64) (map[string][]string, map[string][]float64) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []qaPair
	if err := json.Unmarshal(raw, &pairs); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int32{"": 0}
	var names = []string{""}
	id := func(w string) int32 {
		if i, ok := ids[w]; ok {
			return i
		}
		ids[w] = int32(len(names))
		names = append(names, w)
		return ids[w]
	}
	type sent struct{ q, a []int32 }
	var data []sent
	for _, p := range pairs {
		q := knowledge.TermsEN(p.Q)
		a := knowledge.TermsEN(p.A)
		if len(q) == 0 || len(a) == 0 {
			continue
		}
		if len(a) > answerTerms {
			a = a[:answerTerms]
		}
		s := sent{q: []int32{0}}
		for _, w := range q {
			s.q = append(s.q, id(w))
		}
		for _, w := range a {
			s.a = append(s.a, id(w))
		}
		data = append(data, s)
		if pooled { // Xue, Jeon and Croft 2008: the pairs both ways, one model
			r := sent{q: []int32{0}}
			r.q = append(r.q, s.a...)
			r.a = append(r.a, s.q[1:]...)
			data = append(data, r)
		}
	}
	// unigram probabilities of target terms, for the lift filter
	uni := map[int32]float64{}
	totalTargets := 0.0
	for _, s := range data {
		for _, a := range s.a {
			uni[a]++
			totalTargets++
		}
	}
	t.Logf("%d pairs, %d terms", len(data), len(names))
	type key struct{ q, a int32 }
	tr := map[key]float64{}
	for _, s := range data { // uniform start over co-occurring pairs
		for _, q := range s.q {
			for _, a := range s.a {
				tr[key{q, a}] = 1
			}
		}
	}
	for it := 0; it < iters; it++ {
		count := map[key]float64{}
		total := map[int32]float64{}
		for _, s := range data {
			for _, a := range s.a {
				z := 0.0
				for _, q := range s.q {
					z += tr[key{q, a}]
				}
				for _, q := range s.q {
					c := tr[key{q, a}] / z
					count[key{q, a}] += c
					total[q] += c
				}
			}
		}
		for k, c := range count {
			tr[k] = c / total[k.q]
		}
	}
	byQ := map[int32][]transPair{}
	for k, p := range tr {
		if k.q == 0 {
			continue
		}
		if minLift > 0 && p < minLift*uni[k.a]/totalTargets {
			continue
		}
		byQ[k.q] = append(byQ[k.q], transPair{names[k.a], p})
	}
	table := map[string][]string{}
	probs := map[string][]float64{}
	for q, ts := range byQ {
		sort.Slice(ts, func(i, j int) bool { return ts[i].p > ts[j].p || ts[i].p == ts[j].p && ts[i].a < ts[j].a })
		if len(ts) > 30 {
			ts = ts[:30]
		}
		for _, x := range ts {
			table[names[q]] = append(table[names[q]], x.a)
			probs[names[q]] = append(probs[names[q]], x.p)
		}
	}
	return table, probs
}

type transPair struct {
	a string
	p float64
}

func TestScratchTranslation(t *testing.T) {
	path := os.Getenv("SCRATCH_PAIRS")
	if path == "" {
		t.Skip("SCRATCH_PAIRS not set")
	}
	defer knowledge.SetTranslation(0, 0, 0, false)
	type variant struct {
		alen   int
		pooled bool
		lift   float64
	}
	variants := []variant{{100, false, 0}, {100, false, 10}}
	knowledge.SetTranslationAbsent(os.Getenv("SCRATCH_ABSENT") != "")
	defer knowledge.SetTranslationAbsent(false)
	for _, v := range variants {
		alen := v.alen
		table, probs := trainModel1(t, path, alen, 8, v.pooled, v.lift)
		for _, w := range []string{"generic", "scale", "cite", "exist", "compil", "password", "account", "phone", "faster", "releas"} {
			var s []string
			for i := range min(8, len(table[w])) {
				s = append(s, fmt.Sprintf("%s %.3f", table[w][i], probs[w][i]))
			}
			t.Logf("%s: %s", w, strings.Join(s, ", "))
		}
		knowledge.SetTranslations(table, probs)
		if os.Getenv("SCRATCH_DEV") != "" {
			for _, w := range strings.Fields(os.Getenv("SCRATCH_WORDS")) {
				var s []string
				for i := range min(8, len(table[w])) {
					s = append(s, fmt.Sprintf("%s %.3f", table[w][i], probs[w][i]))
				}
				t.Logf("%s: %s", w, strings.Join(s, ", "))
			}
		}
		for _, k := range []int{3, 10} {
			for _, share := range []float64{1, 2, 5} {
				knowledge.SetTranslation(share, k, 0, false)
				measureParts(t, fmt.Sprintf("tlm %v top %d share %.2f", v, k, share))
			}
			for _, share := range []float64{0.1, 0.25, 0.5, 1} {
				knowledge.SetTranslation(share, k, 0, true)
				measureParts(t, fmt.Sprintf("tlm %v top %d share %.2f norm", v, k, share))
			}
		}
	}
}

var _ = math.Log
