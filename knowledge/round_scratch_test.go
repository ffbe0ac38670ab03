package knowledge_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/knowledge/evalset"
)

// Scratch harness of the fifth round (docs/knowledge-bases.md, "The fifth round"): each
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

// TestScratchDevRanks lists the development questions not answered in the top three,
// with the rank of their answer and the question's terms the answering chunk shares.
func TestScratchDevRanks(t *testing.T) {
	if os.Getenv("SCRATCH_DEV") == "" {
		t.Skip("SCRATCH_DEV not set")
	}
	bases, _ := evalset.Builtin()
	for _, b := range bases {
		if !slices.Contains(scratchParts[0].bases, b.Name) {
			continue
		}
		ix := knowledge.NewIndex()
		texts := map[string]string{}
		for i, src := range b.Sources {
			id := fmt.Sprintf("src%03d", i)
			chunks, _ := knowledge.ChunkSource(id, src.Content)
			for i := range chunks {
				chunks[i].Title = src.Title
				texts[chunks[i].ID] = chunks[i].Text
			}
			ix.Add(id, chunks)
		}
		for _, q := range b.Questions {
			want := fmt.Sprintf("src%03d", q.Source)
			hits := ix.Search(q.Text, 10, 0)
			rank := 0
			for i, h := range hits {
				if h.SourceID == want && scratchAnswers(h.Text, q.Answer) {
					rank = i + 1
					break
				}
			}
			if rank >= 1 && rank <= 3 {
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
			t.Logf("[%s] rank %d: %s\n   terms %v shared %v\n   answer: %.120q", b.Name, rank, q.Text, qt, shared, q.Answer)
			for i, h := range hits[:min(3, len(hits))] {
				t.Logf("   top%d %.3f %s: %.100q", i+1, h.Score, h.SourceID, h.Text)
			}
		}
	}
}

func scratchAnswers(chunk, answer string) bool {
	a, c := scratchTrigrams(answer), scratchTrigrams(chunk)
	if len(a) == 0 || len(c) == 0 {
		return false
	}
	small, big := a, c
	if len(c) < len(a) {
		small, big = c, a
	}
	n := 0
	for g := range small {
		if big[g] {
			n++
		}
	}
	return 2*n >= len(small)
}

func scratchTrigrams(s string) map[string]bool {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := map[string]bool{}
	for i := 0; i+3 <= len(words); i++ {
		out[strings.Join(words[i:i+3], " ")] = true
	}
	if len(words) > 0 && len(words) < 3 {
		out[strings.Join(words, " ")] = true
	}
	return out
}

func TestScratchBaseline(t *testing.T) { measureParts(t, "baseline") }

func TestScratchIdentifierParts(t *testing.T) {
	for _, s := range []string{"ReadFile", "os.Exit", "go_get", "GOPATH", "HTTPServer", "Vec<T>", "Login.gov", "Go 1.18.", "end.Next"} {
		t.Logf("%q → %q", s, knowledge.IdentifierParts(s))
	}
}

func TestScratchIdentifiers(t *testing.T) {
	defer knowledge.SetIdentifiers(0, 0, false)
	for _, join := range []bool{false, true} {
		for _, w := range [][2]float64{{1, 1}, {0.5, 0.5}, {1, 0.5}, {0.5, 1}, {0.25, 0.25}} {
			knowledge.SetIdentifiers(w[0], w[1], join)
			measureParts(t, fmt.Sprintf("ident chunk %.2f query %.2f join %v", w[0], w[1], join))
		}
	}
}

func TestScratchBackground(t *testing.T) {
	path := os.Getenv("SCRATCH_BACKGROUND")
	if path == "" {
		t.Skip("SCRATCH_BACKGROUND (a word list, most frequent first) not set")
	}
	defer knowledge.SetBackground(0, 100, false)
	for _, words := range []int{0, 100000, 30000} {
		if err := knowledge.LoadBackground(path, words); err != nil {
			t.Fatal(err)
		}
		t.Logf("background of %d words: %d stems", words, knowledge.BackgroundSize())
		for _, rare := range []bool{false, true} {
			for _, l := range []float64{30, 100, 300} {
				for _, s := range []float64{0.1, 0.25, 0.5, 0.75} {
					knowledge.SetBackground(s, l, rare)
					measureParts(t, fmt.Sprintf("bg w%d share %.2f len %.0f rare %v", words, s, l, rare))
				}
			}
		}
	}
}

func TestScratchQueryWeighting(t *testing.T) {
	defer knowledge.SetQueryWeighting(0, 0)
	for _, p := range []float64{0.5, 1, 2} {
		knowledge.SetQueryWeighting(p, 0)
		measureParts(t, fmt.Sprintf("qw power %.1f", p))
	}
	for _, d := range []float64{0.2, 0.3, 0.4, 0.5} {
		knowledge.SetQueryWeighting(0, d)
		measureParts(t, fmt.Sprintf("qw drop %.1f", d))
	}
}

func TestScratchLead(t *testing.T) {
	defer knowledge.SetLead(0)
	for _, w := range []float64{0.05, 0.1, 0.2, 0.3} {
		knowledge.SetLead(w)
		measureParts(t, fmt.Sprintf("lead %.2f", w))
	}
}

func TestScratchBM25L(t *testing.T) {
	defer knowledge.SetBM25L(0)
	for _, d := range []float64{0.25, 0.5, 1} {
		knowledge.SetBM25L(d)
		measureParts(t, fmt.Sprintf("bm25l δ %.2f", d))
	}
}

func TestScratchQTF(t *testing.T) {
	defer knowledge.SetQTF(0)
	for _, k3 := range []float64{0.5, 1, 8, 1000} {
		knowledge.SetQTF(k3)
		measureParts(t, fmt.Sprintf("qtf k3 %.1f", k3))
	}
}

func TestScratchLGD(t *testing.T) {
	defer knowledge.SetLGD(0)
	for _, c := range []float64{0.5, 1, 2, 4} {
		knowledge.SetLGD(c)
		measureParts(t, fmt.Sprintf("lgd c %.1f", c))
	}
}

func TestScratchBigrams(t *testing.T) {
	defer knowledge.SetBigrams(0, 0.5)
	for _, m := range []float64{0.3, 0.5, 0.7} {
		for _, w := range []float64{0.1, 0.25, 0.5, 1} {
			knowledge.SetBigrams(w, m)
			measureParts(t, fmt.Sprintf("rare bigrams w %.2f min %.1f", w, m))
		}
	}
}

func TestScratchBackgroundMu(t *testing.T) {
	path := os.Getenv("SCRATCH_BACKGROUND")
	if path == "" {
		t.Skip("SCRATCH_BACKGROUND (a word list, most frequent first) not set")
	}
	defer knowledge.SetBackground(0, 100, false)
	defer knowledge.SetBackgroundMu(0)
	if err := knowledge.LoadBackground(path, 100000); err != nil {
		t.Fatal(err)
	}
	for _, l := range scratchFloats("SCRATCH_BG_LENS", 30, 100, 300) {
		for _, mu := range scratchFloats("SCRATCH_BG_MUS", 10, 30, 100, 300) {
			knowledge.SetBackground(1, l, false)
			knowledge.SetBackgroundMu(mu)
			measureParts(t, fmt.Sprintf("bg prior mu %.0f len %.0f", mu, l))
		}
	}
}

func TestScratchBackgroundLead(t *testing.T) {
	path := os.Getenv("SCRATCH_BACKGROUND")
	if path == "" {
		t.Skip("SCRATCH_BACKGROUND (a word list, most frequent first) not set")
	}
	defer knowledge.SetBackground(0, 100, false)
	defer knowledge.SetLead(0)
	if err := knowledge.LoadBackground(path, 100000); err != nil {
		t.Fatal(err)
	}
	for _, bg := range [][2]float64{{0.5, 300}, {0.75, 100}} {
		for _, lead := range []float64{0.05, 0.1} {
			knowledge.SetBackground(bg[0], bg[1], false)
			knowledge.SetLead(lead)
			measureParts(t, fmt.Sprintf("bg %.2f len %.0f + lead %.2f", bg[0], bg[1], lead))
		}
	}
}

func TestScratchBackgroundSize(t *testing.T) {
	path := os.Getenv("SCRATCH_BACKGROUND")
	if path == "" {
		t.Skip("SCRATCH_BACKGROUND (a word list, most frequent first) not set")
	}
	defer knowledge.SetBackground(0, 100, false)
	defer knowledge.SetBackgroundMu(0)
	for _, words := range []int{20000, 50000, 100000, 0} {
		if err := knowledge.LoadBackground(path, words); err != nil {
			t.Fatal(err)
		}
		knowledge.SetBackground(1, 300, false)
		knowledge.SetBackgroundMu(300)
		measureParts(t, fmt.Sprintf("bg prior mu 300 len 300 words %d (%d stems)", words, knowledge.BackgroundSize()))
	}
}

// scratchFloats reads a space-separated list of numbers from the environment, else def.
func scratchFloats(env string, def ...float64) []float64 {
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	var out []float64
	for _, f := range strings.Fields(v) {
		var x float64
		fmt.Sscan(f, &x)
		out = append(out, x)
	}
	return out
}
