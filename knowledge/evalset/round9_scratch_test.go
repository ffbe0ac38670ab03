package evalset

// Scratch harness of the ninth round (docs/knowledge-bases.md, "The ninth round"): a linear
// re-ranker of today's top N candidates, its weights learned on the outside pseudo
// knowledge bases (SCRATCH_TRAIN) only, cross-validated across their halves, then measured
// on the set's parts. rust-faq's totals only are printed. Reverted with the round.

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/knowledge"
)

type r9q struct {
	z     [][]float64 // per candidate, standardized features
	label []bool
}

func r9depth() int {
	n, _ := strconv.Atoi(os.Getenv("SCRATCH_N"))
	if n == 0 {
		n = 20
	}
	return n
}

// r9questions indexes a base as runBase does and returns each question's candidates.
func r9questions(t *testing.T, b Base, n int) []r9q {
	t.Helper()
	ix := knowledge.NewIndex()
	for i, src := range b.Sources {
		id := fmt.Sprintf("src%03d", i)
		chunks, err := knowledge.ChunkSource(id, src.Content)
		if err != nil {
			t.Fatal(err)
		}
		for i := range chunks {
			chunks[i].Title = src.Title
		}
		ix.Add(id, chunks)
	}
	var out []r9q
	for _, q := range b.Questions {
		want := fmt.Sprintf("src%03d", q.Source)
		cands := ix.ScratchCandidates(q.Text, n)
		var x r9q
		for _, c := range cands {
			x.z = append(x.z, c.F)
			x.label = append(x.label, c.SourceID == want && answers(c.Text, q.Answer))
		}
		standardize(x.z)
		out = append(out, x)
	}
	return out
}

func standardize(rows [][]float64) {
	if len(rows) == 0 {
		return
	}
	for j := range rows[0] {
		mean, sd := 0.0, 0.0
		for _, r := range rows {
			mean += r[j]
		}
		mean /= float64(len(rows))
		for _, r := range rows {
			sd += (r[j] - mean) * (r[j] - mean)
		}
		sd = math.Sqrt(sd / float64(len(rows)))
		for _, r := range rows {
			if sd > 1e-12 {
				r[j] = (r[j] - mean) / sd
			} else {
				r[j] = 0
			}
		}
	}
}

type r9fit struct {
	r3  int
	mrr float64
}

func (a r9fit) better(b r9fit, margin int) bool {
	if margin > 0 {
		return a.r3 >= b.r3+margin
	}
	return a.r3 > b.r3 || a.r3 == b.r3 && a.mrr > b.mrr+1e-9
}

// evaluate ranks each question's candidates by w·z (ties in today's order).
func evaluate(qs []r9q, w []float64) r9fit {
	var f r9fit
	idx := make([]int, 0, 64)
	s := make([]float64, 0, 64)
	for _, q := range qs {
		idx, s = idx[:0], s[:0]
		for i, z := range q.z {
			v := 0.0
			for j, x := range z {
				v += w[j] * x
			}
			s = append(s, v)
			idx = append(idx, i)
		}
		sort.SliceStable(idx, func(a, b int) bool { return s[idx[a]] > s[idx[b]] })
		for r, i := range idx {
			if q.label[i] {
				if r < 3 {
					f.r3++
				}
				if r < 10 {
					f.mrr += 1 / float64(r+1)
				}
				break
			}
		}
	}
	if len(qs) > 0 {
		f.mrr /= float64(len(qs))
	}
	return f
}

// ascend: coordinate ascent on a linear model (Metzler and Croft 2007), the weight of
// today's score fixed at 1, each other weight in turn set to its best grid value.
func ascend(t *testing.T, qs []r9q, use []bool, margin int) ([]float64, r9fit) {
	w := make([]float64, len(knowledge.ScratchFeatureNames))
	w[0] = 1
	grid := []float64{-1, -0.5, -0.3, -0.2, -0.1, -0.05, 0, 0.05, 0.1, 0.2, 0.3, 0.5, 1}
	best := evaluate(qs, w)
	for pass := 0; pass < 6; pass++ {
		changed := false
		for j := 1; j < len(w); j++ {
			if !use[j] {
				continue
			}
			for _, v := range grid {
				if v == w[j] {
					continue
				}
				old := w[j]
				w[j] = v
				if f := evaluate(qs, w); f.better(best, margin) {
					best, changed = f, true
				} else {
					w[j] = old
				}
			}
		}
		if !changed {
			break
		}
	}
	return w, best
}

// ranknet: pairwise logistic regression (RankNet's loss on a linear model) with an L2
// penalty lambda, full-batch gradient descent from today's ranking.
func ranknet(qs []r9q, use []bool, lambda float64) []float64 {
	w := make([]float64, len(knowledge.ScratchFeatureNames))
	w[0] = 1
	g := make([]float64, len(w))
	pairs := 0
	for _, q := range qs {
		for i, l := range q.label {
			if l {
				pairs += len(q.label) - 1
				_ = i
			}
		}
	}
	if pairs == 0 {
		return w
	}
	for it := 0; it < 300; it++ {
		clear(g)
		for _, q := range qs {
			for i, li := range q.label {
				if !li {
					continue
				}
				for k, lk := range q.label {
					if lk {
						continue
					}
					d := 0.0
					for j := range w {
						d += w[j] * (q.z[i][j] - q.z[k][j])
					}
					p := 1 / (1 + math.Exp(d)) // -dloss/dd
					for j := range w {
						g[j] -= p * (q.z[i][j] - q.z[k][j])
					}
				}
			}
		}
		for j := range w {
			if !use[j] {
				continue
			}
			g[j] = g[j]/float64(pairs) + 2*lambda*w[j]
			w[j] -= 0.5 * g[j]
		}
	}
	return w
}

var r9parts = []struct {
	name  string
	bases []string
}{
	{"dev", []string{"go-faq", "login-gov-en", "login-gov-es"}},
	{"py", []string{"python-faq"}},
	{"pylib", []string{"python-library-faq"}},
	{"django", []string{"django-faq"}},
	{"rust", []string{"rust-faq"}},
}

func r9outside(t *testing.T) [][]r9q {
	dir := os.Getenv("SCRATCH_TRAIN")
	if dir == "" {
		t.Skip("SCRATCH_TRAIN names the outside pseudo knowledge bases")
	}
	all, err := Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]r9q
	n := 0
	for _, b := range all {
		if len(b.Questions) > 200 { // every k-th, as the eighth round
			step := (len(b.Questions) + 199) / 200
			var qs []Question
			for j := 0; j < len(b.Questions); j += step {
				qs = append(qs, b.Questions[j])
			}
			b.Questions = qs
		}
		out = append(out, r9questions(t, b, r9depth()))
		n += len(b.Questions)
	}
	t.Logf("%d outside bases, %d questions, depth %d", len(all), n, r9depth())
	return out
}

func flat(bs [][]r9q, keep func(i int) bool) []r9q {
	var out []r9q
	for i, b := range bs {
		if keep(i) {
			out = append(out, b...)
		}
	}
	return out
}

func r9set(t *testing.T) map[string][]r9q {
	bases, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]r9q{}
	for _, p := range r9parts {
		for _, b := range bases {
			if slices.Contains(p.bases, b.Name) {
				out[p.name] = append(out[p.name], r9questions(t, b, r9depth())...)
			}
		}
	}
	return out
}

func r9row(set map[string][]r9q, w []float64) string {
	var r3, mrr []string
	for _, p := range r9parts {
		f := evaluate(set[p.name], w)
		r3 = append(r3, fmt.Sprint(f.r3))
		mrr = append(mrr, fmt.Sprintf("%.3f", f.mrr))
	}
	return strings.Join(r3, " / ") + " | " + strings.Join(mrr, " / ")
}

func r9weights(w []float64) string {
	var b strings.Builder
	for j, v := range w {
		if v != 0 {
			fmt.Fprintf(&b, "%s %.3g, ", knowledge.ScratchFeatureNames[j], v)
		}
	}
	return b.String()
}

// subsets of features the round compares (selection among them on the development part only)
var r9subsets = map[string][]string{
	"all":      nil,
	"parts":    {"chunk", "source", "when", "localchunk"},
	"coverage": {"coverage", "headcov", "matched", "exact"},
	"position": {"first", "relpos", "loglen", "adjacent", "srcrank", "invrank"},
	"prox":     {"density", "logspan"},
}

func r9use(name string) []bool {
	use := make([]bool, len(knowledge.ScratchFeatureNames))
	sub := r9subsets[name]
	for j, f := range knowledge.ScratchFeatureNames {
		use[j] = j > 0 && (sub == nil || slices.Contains(sub, f))
	}
	return use
}

func TestScratchRound9(t *testing.T) {
	outside := r9outside(t)
	set := r9set(t)
	today := make([]float64, len(knowledge.ScratchFeatureNames))
	today[0] = 1
	a := flat(outside, func(i int) bool { return i%2 == 0 })
	b := flat(outside, func(i int) bool { return i%2 == 1 })
	all := flat(outside, func(int) bool { return true })
	t.Logf("today: outside all %+v A %+v B %+v; set %s", evaluate(all, today), evaluate(a, today), evaluate(b, today), r9row(set, today))
	subsets := strings.Split(os.Getenv("SCRATCH_SUBSETS"), ",")
	if os.Getenv("SCRATCH_SUBSETS") == "" {
		subsets = []string{"all"}
	}
	margin, _ := strconv.Atoi(os.Getenv("SCRATCH_MARGIN"))
	for _, sub := range subsets {
		use := r9use(sub)
		wa, fa := ascend(t, a, use, margin)
		wb, fb := ascend(t, b, use, margin)
		w, f := ascend(t, all, use, margin)
		t.Logf("CA %s margin %d: on A %+v → B %+v (today %+v); on B %+v → A %+v (today %+v); on all %+v [%s]",
			sub, margin, fa, evaluate(b, wa), evaluate(b, today), fb, evaluate(a, wb), evaluate(a, today), f, r9weights(w))
		if os.Getenv("SCRATCH_SET") != "" {
			t.Logf("CA %s margin %d on the set: %s", sub, margin, r9row(set, w))
		}
		for _, lambda := range []float64{0.001, 0.01, 0.1} {
			wa := ranknet(a, use, lambda)
			wb := ranknet(b, use, lambda)
			w := ranknet(all, use, lambda)
			t.Logf("RankNet %s λ %g: on A %+v → B %+v; on B %+v → A %+v; on all %+v [%s]",
				sub, lambda, evaluate(a, wa), evaluate(b, wa), evaluate(b, wb), evaluate(a, wb), evaluate(all, w), r9weights(w))
			if os.Getenv("SCRATCH_SET") != "" {
				t.Logf("RankNet %s λ %g on the set: %s", sub, lambda, r9row(set, w))
			}
		}
	}
}
