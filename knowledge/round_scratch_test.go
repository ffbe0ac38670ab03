package knowledge_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/knowledge/evalset"
)

var scratchParts = []struct {
	name  string
	bases []string
}{
	{"dev", []string{"go-faq", "login-gov-en", "login-gov-es"}},
	{"python-faq", []string{"python-faq"}},
	{"python-library-faq", []string{"python-library-faq"}},
	{"django-faq", []string{"django-faq"}},
}

func measureParts(t *testing.T, label string) {
	bases, err := evalset.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
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
		out = append(out, p.name+" r1 "+strconv.FormatFloat(f.Recall1, 'f', 3, 64)+" r3 "+strconv.Itoa(int(f.Recall3*float64(f.Questions)+0.5))+" r5 "+strconv.FormatFloat(f.Recall5, 'f', 3, 64)+" mrr "+strconv.FormatFloat(f.MRR, 'f', 3, 64))
		if p.name == "dev" && os.Getenv("SCRATCH_DEVMISSES") != "" {
			for _, m := range rep.Misses[evalset.ModeLexical] {
				t.Log("dev miss: " + m)
			}
		}
	}
	t.Logf("%-28s %s", label, strings.Join(out, " | "))
}

func TestScratchAnswerType(t *testing.T) {
	for _, w := range []float64{0, 0.05, 0.1, 0.2, 0.3} {
		knowledge.SetAnswerTypeWeight(w)
		measureParts(t, "answer type "+strconv.FormatFloat(w, 'f', 2, 64))
	}
	knowledge.SetAnswerTypeWeight(0)
}

func TestScratchAssociation(t *testing.T) {
	for _, minA := range []float64{0.3, 0.5, 0.7} {
		for _, per := range []int{1, 3} {
			for _, w := range []float64{0.1, 0.2, 0.3, 0.5} {
				knowledge.SetAssociation(w, minA, per)
				measureParts(t, "assoc w"+strconv.FormatFloat(w, 'f', 2, 64)+" min"+strconv.FormatFloat(minA, 'f', 1, 64)+" per"+strconv.Itoa(per))
			}
		}
	}
	knowledge.SetAssociation(0, 0.5, 3)
}

func TestScratchPrefix(t *testing.T) {
	for _, all := range []bool{false, true} {
		for _, n := range []int{4, 5, 6} {
			for _, w := range []float64{0.2, 0.5, 1} {
				knowledge.SetPrefix(w, n, all)
				measureParts(t, "prefix w"+strconv.FormatFloat(w, 'f', 1, 64)+" len"+strconv.Itoa(n)+" all "+strconv.FormatBool(all))
			}
		}
	}
	knowledge.SetPrefix(0, 5, false)
}

func TestScratchISF(t *testing.T) {
	for _, m := range []float64{0.25, 0.5, 0.75} {
		knowledge.SetISF(m)
		measureParts(t, "isf "+strconv.FormatFloat(m, 'f', 2, 64))
	}
	knowledge.SetISF(0)
}

func TestScratchDiversify(t *testing.T) {
	for _, c := range []int{1, 2} {
		for _, top := range []int{3, 5} {
			knowledge.SetDiversify(c, top, 3)
			measureParts(t, "diversify cap"+strconv.Itoa(c)+" top"+strconv.Itoa(top))
		}
	}
	knowledge.SetDiversify(0, 3, 1)
}

func TestScratchQL(t *testing.T) {
	for _, mu := range []float64{100, 300, 1000} {
		for _, m := range []float64{0.3, 0.5, 1} {
			knowledge.SetQL(m, mu)
			measureParts(t, "ql share"+strconv.FormatFloat(m, 'f', 1, 64)+" mu"+strconv.FormatFloat(mu, 'f', 0, 64))
		}
	}
	knowledge.SetQL(0, 300)
}

func TestScratchFreshMisses(t *testing.T) {
	bases, _ := evalset.Builtin()
	for _, b := range bases {
		if b.Name != "django-faq" {
			continue
		}
		rep, err := evalset.Run(context.Background(), []evalset.Base{b}, evalset.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range rep.Misses[evalset.ModeLexical] {
			t.Log("fresh miss (not in top 5): " + m)
		}
	}
}

func TestScratchFreshOverlap(t *testing.T) {
	bases, _ := evalset.Builtin()
	for _, b := range bases {
		if b.Name != "django-faq" {
			continue
		}
		rep, _ := evalset.Run(context.Background(), []evalset.Base{b}, evalset.Options{})
		missed := map[string]bool{}
		for _, m := range rep.Misses[evalset.ModeLexical] {
			missed[strings.TrimPrefix(m, "django-faq: ")] = true
		}
		for _, q := range b.Questions {
			if !missed[q.Text] {
				continue
			}
			at := map[string]bool{}
			for _, w := range knowledge.Terms(q.Answer) {
				at[w] = true
			}
			var shared []string
			qt := knowledge.Terms(q.Text)
			for _, w := range qt {
				if at[w] {
					shared = append(shared, w)
				}
			}
			t.Logf("%v of %v shared: %s", shared, qt, q.Text)
		}
	}
}
