package evalset

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/voiceapi/voiceapi/knowledge"
)

// Modes of retrieval the harness measures.
const (
	ModeLexical = "lexical"
	ModeVector  = "vector"
	ModeHybrid  = "hybrid"
)

// depth is how many chunks each question retrieves: enough for recall@5 and for MRR to
// credit an answer found at rank 10.
const depth = 10

// Options configures a run. Embedder, when set, embeds every chunk and question, and the
// vector and hybrid modes are measured too.
type Options struct {
	Embedder knowledge.Embedder
	// Fusions are the hybrid modes to measure, one each (named by FusionMode), so that
	// fusions are compared on one embedding of the set; one mode, ModeHybrid with
	// knowledge.DefaultFusion, when empty.
	Fusions []knowledge.Fusion
	// Published indexes each source as published, its questions before their answers,
	// instead of its answers alone.
	Published bool
}

// hybridModes names each hybrid mode of a run with the fusion it measures.
func (o Options) hybridModes() map[string]knowledge.Fusion {
	if len(o.Fusions) == 0 {
		return map[string]knowledge.Fusion{ModeHybrid: knowledge.DefaultFusion}
	}
	out := map[string]knowledge.Fusion{}
	for _, f := range o.Fusions {
		out[FusionMode(f)] = f
	}
	return out
}

// Figures are one mode's results over a set of questions.
type Figures struct {
	Questions int
	Recall1   float64
	Recall3   float64
	Recall5   float64
	MRR       float64 // mean reciprocal rank of the first answering chunk, 0 past rank 10
}

// Report is a run's figures: per knowledge base and mode, and over all questions.
type Report struct {
	Bases []string
	Modes []string
	Per   map[string]map[string]Figures // base → mode → figures
	All   map[string]Figures            // mode → figures over every question
	// Misses lists, per mode, the questions whose answer was not in the top 5.
	Misses map[string][]string
}

// ranks collects, per mode, the rank (1-based, 0 for none in depth) of each question's
// first answering chunk.
type ranks map[string][]int

// Run measures every mode on every knowledge base. Each base is indexed the way the service
// indexes text sources (knowledge.ChunkSource, then Index.Add).
func Run(ctx context.Context, bases []Base, opts Options) (*Report, error) {
	modes := []string{ModeLexical}
	if opts.Embedder != nil {
		modes = append(modes, ModeVector)
		if len(opts.Fusions) == 0 {
			modes = append(modes, ModeHybrid)
		}
		for _, f := range opts.Fusions {
			if m := FusionMode(f); !slices.Contains(modes, m) {
				modes = append(modes, m)
			}
		}
	}
	rep := &Report{Modes: modes, Per: map[string]map[string]Figures{}, All: map[string]Figures{}, Misses: map[string][]string{}}
	all := ranks{}
	for _, b := range bases {
		r, err := runBase(ctx, b, modes, opts, rep)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name, err)
		}
		rep.Bases = append(rep.Bases, b.Name)
		rep.Per[b.Name] = map[string]Figures{}
		for _, m := range modes {
			rep.Per[b.Name][m] = figures(r[m])
			all[m] = append(all[m], r[m]...)
		}
	}
	for _, m := range modes {
		rep.All[m] = figures(all[m])
	}
	return rep, nil
}

func runBase(ctx context.Context, b Base, modes []string, opts Options, rep *Report) (ranks, error) {
	ix := knowledge.NewIndex()
	byID := map[string]knowledge.Chunk{}
	var all []knowledge.Chunk
	for i, src := range b.Sources {
		id := fmt.Sprintf("src%03d", i)
		content := src.Content
		if opts.Published {
			content = src.Published
		}
		chunks, err := knowledge.ChunkSource(id, content)
		if err != nil {
			return nil, fmt.Errorf("source %q: %w", src.Title, err)
		}
		for i := range chunks {
			chunks[i].Title = src.Title // as the service does for a text's title
		}
		if err := knowledge.EmbedChunks(ctx, opts.Embedder, chunks); err != nil {
			return nil, fmt.Errorf("embedding: %w", err)
		}
		ix.Add(id, chunks)
		for _, c := range chunks {
			byID[c.ID] = c
		}
		all = append(all, chunks...)
	}
	var qvecs [][]float32
	if opts.Embedder != nil {
		texts := make([]string, len(b.Questions))
		for i, q := range b.Questions {
			texts[i] = q.Text
		}
		var err error
		if qvecs, err = opts.Embedder.Embed(ctx, texts); err != nil {
			return nil, fmt.Errorf("embedding the questions: %w", err)
		}
	}
	hybrid := opts.hybridModes()
	out := ranks{}
	for qi, q := range b.Questions {
		want := fmt.Sprintf("src%03d", q.Source)
		for _, m := range modes {
			var hits []knowledge.Hit
			switch m {
			case ModeLexical:
				hits = ix.Search(q.Text, depth, 0)
			case ModeVector:
				hits = vectorSearch(all, qvecs[qi], depth)
			default:
				hits = ix.SearchHybrid(q.Text, qvecs[qi], depth, 0, hybrid[m])
			}
			rank := 0
			for i, h := range hits {
				if h.SourceID == want && answers(byID[h.ChunkID].Text, q.Answer) {
					rank = i + 1
					break
				}
			}
			out[m] = append(out[m], rank)
			if rank == 0 || rank > 5 {
				rep.Misses[m] = append(rep.Misses[m], fmt.Sprintf("%s: %s", b.Name, q.Text))
			}
		}
	}
	return out, nil
}

// vectorSearch ranks chunks by cosine similarity alone, best first, ties by chunk id.
func vectorSearch(chunks []knowledge.Chunk, q []float32, k int) []knowledge.Hit {
	hits := make([]knowledge.Hit, 0, len(chunks))
	for _, c := range chunks {
		hits = append(hits, knowledge.Hit{ChunkID: c.ID, SourceID: c.SourceID, Text: c.Text, Score: cosine(q, c.Vector)})
	}
	slices.SortFunc(hits, func(a, b knowledge.Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ChunkID, b.ChunkID)
	})
	return hits[:min(k, len(hits))]
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// answers reports whether a chunk holds the answer: at least half of the word trigrams of
// the shorter of the two are in the other. A short answer inside a chunk passes; so does a
// chunk that is a piece of a long answer; a chunk that only overlaps the answer's last line
// (the chunker's overlap) does not.
func answers(chunk, answer string) bool {
	a, c := trigrams(answer), trigrams(chunk)
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

func trigrams(s string) map[string]bool {
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

func figures(r []int) Figures {
	f := Figures{Questions: len(r)}
	if len(r) == 0 {
		return f
	}
	for _, k := range r {
		if k == 0 {
			continue
		}
		if k <= 1 {
			f.Recall1++
		}
		if k <= 3 {
			f.Recall3++
		}
		if k <= 5 {
			f.Recall5++
		}
		f.MRR += 1 / float64(k)
	}
	n := float64(len(r))
	f.Recall1, f.Recall3, f.Recall5, f.MRR = f.Recall1/n, f.Recall3/n, f.Recall5/n, f.MRR/n
	return f
}

// Print writes the report as a table: one row per knowledge base and mode, then the totals.
func (r *Report) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "set\tmode\tquestions\trecall@1\trecall@3\trecall@5\tMRR\t")
	row := func(name, mode string, f Figures) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t\n", name, mode, f.Questions, f.Recall1, f.Recall3, f.Recall5, f.MRR)
	}
	for _, b := range r.Bases {
		for _, m := range r.Modes {
			row(b, m, r.Per[b][m])
		}
	}
	for _, m := range r.Modes {
		row("all", m, r.All[m])
	}
	tw.Flush()
}
