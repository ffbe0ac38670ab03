package knowledge

// Scratch of the sixth round (docs/knowledge-bases.md, "The sixth round"): every
// experiment off by default. Reverted once the round is decided.

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// rankModel names the chunk-level weighting: "bm25" (today's), "inl2", "pl2", "dph".
var (
	rankModel = "bm25"
	dfrC      = 1.0
)

// Derivational expansion: each English question stem's WordNet relatives ("+" pointers),
// added at derivWeight of their own weight; derivPrefix > 0 keeps only relatives sharing
// that many first letters with the stem.
var (
	derivWeight   = 0.0
	derivPrefix   = 0
	derivInSource = false
	derivTable    map[string][]string
)

type termModel struct {
	idf, n, cf, avgLen, smoothedDF float64
	df                             int
}

func smoothedDF(term string, n float64, df int, lang language) float64 {
	f := float64(df)
	if lang == english_ {
		if s, ok := loadBackground().share(term); ok {
			f = (f + backgroundChunks*s) * n / (n + backgroundChunks)
		}
	}
	return f
}

func (m termModel) weight(tf, dlen float64) float64 { return m.weightAs(rankModel, tf, dlen) }

// CombSUM (Fox and Shaw 1994) of two weighting models: fuseShare of the normalized score
// from fuseModel.
var (
	fuseModel = ""
	fuseShare = 0.0
)

func (m termModel) weightAs(model string, tf, dlen float64) float64 {
	if dlen <= 0 {
		dlen = 1
	}
	switch model {
	case "f2exp": // Fang and Zhai 2005, k 0.35, s dfrC
		idf := math.Pow((m.n+1)/math.Max(m.smoothedDF, 0.5), 0.35)
		return idf * tf / (tf + dfrC + dfrC*dlen/m.avgLen)
	case "inl2":
		tfn := tf * math.Log2(1+dfrC*m.avgLen/dlen)
		return tfn / (tfn + 1) * math.Log2((m.n+1)/(m.smoothedDF+0.5))
	case "pl2":
		tfn := tf * math.Log2(1+dfrC*m.avgLen/dlen)
		cf := m.cf
		if m.df > 0 {
			cf *= m.smoothedDF / float64(m.df)
		}
		lambda := math.Max(cf, 0.5) / m.n
		w := (tfn*math.Log2(tfn/lambda) + (lambda-tfn)*math.Log2E + 0.5*math.Log2(2*math.Pi*tfn)) / (tfn + 1)
		return math.Max(0, w)
	case "dph":
		f := math.Min(tf/dlen, 0.999)
		norm := (1 - f) * (1 - f) / (tf + 1)
		cf := m.cf
		if m.df > 0 {
			cf *= m.smoothedDF / float64(m.df)
		}
		cf = math.Max(cf, 0.5)
		w := norm * (tf*math.Log2(tf*m.avgLen/dlen*m.n/cf) + 0.5*math.Log2(2*math.Pi*tf*(1-f)))
		return math.Max(0, w)
	}
	return m.idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dlen/m.avgLen))
}

func expandDerivations(terms []string, weights []float64, lang language) ([]string, []float64) {
	if derivWeight == 0 || lang != english_ || derivTable == nil {
		return terms, weights
	}
	orig := len(terms)
	for i := range orig {
		for _, r := range derivTable[terms[i]] {
			if derivPrefix > 0 && !sharePrefix(terms[i], r, derivPrefix) {
				continue
			}
			if slices.Contains(terms, r) {
				continue
			}
			terms = append(terms, r)
			weights = append(weights, derivWeight)
		}
	}
	return terms, weights
}

func sharePrefix(a, b string, n int) bool {
	return len(a) >= n && len(b) >= n && a[:n] == b[:n]
}

// loadDerivations reads WordNet's data.* files in dir: each "+" (derivationally related
// form) pointer between two single words gives their stems as relatives.
func loadDerivations(dir string) (map[string][]string, error) {
	type ptr struct {
		src, dst int
		key      string
	}
	words := map[string][]string{} // pos+offset → words
	var ptrs []struct {
		from string
		p    ptr
	}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		f, err := os.Open(filepath.Join(dir, "data."+pos))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "  ") {
				continue
			}
			fs := strings.Fields(strings.SplitN(line, " | ", 2)[0])
			if len(fs) < 4 {
				continue
			}
			key := posLetter(fs[2]) + fs[0]
			wc, _ := strconv.ParseInt(fs[3], 16, 32)
			i := 4
			var ws []string
			for range wc {
				w := strings.ToLower(fs[i])
				if j := strings.IndexByte(w, '('); j > 0 {
					w = w[:j]
				}
				ws = append(ws, w)
				i += 2
			}
			words[key] = ws
			pc, _ := strconv.Atoi(fs[i])
			i++
			for range pc {
				sym, off, p, st := fs[i], fs[i+1], fs[i+2], fs[i+3]
				i += 4
				if sym != "+" {
					continue
				}
				s, _ := strconv.ParseInt(st[:2], 16, 32)
				d, _ := strconv.ParseInt(st[2:], 16, 32)
				ptrs = append(ptrs, struct {
					from string
					p    ptr
				}{key, ptr{int(s), int(d), posLetter(p) + off}})
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	rel := map[string][]string{}
	plain := func(w string) bool {
		return len(w) > 1 && strings.IndexFunc(w, func(c rune) bool { return c < 'a' || c > 'z' }) < 0 && !isStop(english_, w)
	}
	for _, x := range ptrs {
		from, to := words[x.from], words[x.p.key]
		if x.p.src < 1 || x.p.src > len(from) || x.p.dst < 1 || x.p.dst > len(to) {
			continue
		}
		a, b := from[x.p.src-1], to[x.p.dst-1]
		if !plain(a) || !plain(b) {
			continue
		}
		sa, sb := stem(english_, a), stem(english_, b)
		if sa == sb || slices.Contains(rel[sa], sb) {
			continue
		}
		rel[sa] = append(rel[sa], sb)
	}
	for k := range rel {
		slices.Sort(rel[k])
	}
	return rel, nil
}

func posLetter(p string) string {
	if p == "s" {
		return "a"
	}
	return p
}

// Lead-ins kept with what they introduce (the second and third rounds' chunking change).
var (
	leadIns       = false
	leadQuestions = false
)

// trailingLeadIns is how many units at the end of cur introduce what follows (a heading,
// a bold line, a line ending in a colon, or with leadQuestions one ending in "?"), when
// they and u fit one chunk and something stays behind; 0 otherwise.
func trailingLeadIns(cur []unit, u unit, size int, joinedLen func([]unit) int) int {
	if !leadIns {
		return 0
	}
	j := len(cur)
	for j > 1 && isLeadIn(cur[j-1].text) {
		j--
	}
	if j == len(cur) || joinedLen(cur[j:])+len([]rune(u.sep))+u.n > size {
		return 0
	}
	return len(cur) - j
}

func isLeadIn(text string) bool {
	t := strings.TrimSpace(text)
	if t == "" || strings.Contains(t, "\n\n") {
		return false
	}
	last := t[strings.LastIndexByte(t, '\n')+1:]
	if level, _ := markdownHeading(last); level > 0 && !strings.Contains(t, "\n") {
		return true
	}
	if strings.HasPrefix(t, "**") && strings.HasSuffix(t, "**") && !strings.Contains(t, "\n") {
		return true
	}
	return strings.HasSuffix(last, ":") || leadQuestions && strings.HasSuffix(last, "?")
}

// Character n-gram evidence (McNamee and Mayfield 2004): each term's n-grams of ngramN
// characters (with its boundaries marked) indexed as terms of their own, and a share
// ngramShare of the score from BM25 over them, so words that share a root but not a stem
// ("scale", "scalable") match in part.
var (
	ngramN     = 0
	ngramShare = 0.0
)

const ngramMark = "\x01"

func termNgrams(t string) []string {
	r := []rune("_" + t + "_")
	if len(r) <= ngramN {
		return []string{ngramMark + string(r)}
	}
	var out []string
	for i := 0; i+ngramN <= len(r); i++ {
		out = append(out, ngramMark+string(r[i:i+ngramN]))
	}
	return out
}

func addNgrams(terms []termCount) ([]termCount, float32) {
	if ngramN == 0 {
		return terms, 0
	}
	pos := map[string]int{}
	var n float32
	out := terms
	for _, tc := range terms {
		for _, g := range termNgrams(tc.term) {
			n += tc.count
			if i, ok := pos[g]; ok {
				out[i].count += tc.count
				continue
			}
			pos[g] = len(out)
			out = append(out, termCount{term: g, count: tc.count})
		}
	}
	return out, n
}

// ngramScores is each document's normalized n-gram score, nil when off.
func (ix *Index) ngramScores(terms []string, sc *scores) []float64 {
	if ngramN == 0 || ngramShare == 0 {
		return nil
	}
	var grams []string
	for _, t := range terms {
		for _, g := range termNgrams(t) {
			if !slices.Contains(grams, g) {
				grams = append(grams, g)
			}
		}
	}
	total := 0.0
	for _, d := range ix.docs {
		if !d.dead {
			total += float64(d.ngLen)
		}
	}
	n := float64(ix.live)
	avg := math.Max(total/n, 1)
	raw := make([]float64, len(ix.docs))
	ideal := 0.0
	for _, g := range grams {
		df := 0
		for _, p := range ix.postings[g] {
			if !ix.docs[p.doc].dead {
				df++
			}
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		ideal += idf
		for _, p := range ix.postings[g] {
			d := &ix.docs[p.doc]
			if d.dead {
				continue
			}
			if sc.score[p.doc] == 0 && raw[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			tf := float64(p.tf)
			raw[p.doc] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(d.ngLen)/avg))
		}
	}
	for i := range raw {
		raw[i] = normalizeScore(raw[i], ideal)
	}
	return raw
}

// Corpus-confirmed morphological variants (Xu and Croft 1998, "Corpus-based stemming
// using cooccurrence of word variants"): stems sharing their first prefix letters are
// conflated when general English uses them alike (the cosine of their GloVe vectors, each
// stem's the mean of its words', at least minCos), instead of Xu and Croft's co-occurrence
// in the collection, which a base of a few dozen chunks is too small for.
func loadVariants(path string, prefix int, minCos float64) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sum := map[string][]float64{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		w := fields[0]
		if len(w) < 2 || strings.IndexFunc(w, func(c rune) bool { return c < 'a' || c > 'z' }) >= 0 || isStop(english_, w) {
			continue
		}
		v := make([]float64, len(fields)-1)
		var norm float64
		for i, x := range fields[1:] {
			v[i], _ = strconv.ParseFloat(x, 64)
			norm += v[i] * v[i]
		}
		norm = math.Sqrt(norm)
		s := stem(english_, w)
		acc, ok := sum[s]
		if !ok {
			acc = make([]float64, len(v))
			order = append(order, s)
		}
		for i := range v {
			acc[i] += v[i] / norm
		}
		sum[s] = acc
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	unit := func(v []float64) {
		var n float64
		for _, x := range v {
			n += x * x
		}
		n = math.Sqrt(n)
		for i := range v {
			v[i] /= n
		}
	}
	groups := map[string][]string{}
	for _, s := range order {
		unit(sum[s])
		if len(s) >= prefix {
			groups[s[:prefix]] = append(groups[s[:prefix]], s)
		}
	}
	out := map[string][]string{}
	for _, g := range groups {
		for i, a := range g {
			for _, b := range g[i+1:] {
				var dot float64
				va, vb := sum[a], sum[b]
				for d := range va {
					dot += va[d] * vb[d]
				}
				if dot >= minCos {
					out[a] = append(out[a], b)
					out[b] = append(out[b], a)
				}
			}
		}
	}
	return out, nil
}
