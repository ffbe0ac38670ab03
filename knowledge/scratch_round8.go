package knowledge

import (
	"math"
	"sort"
)

// Scratch of the eighth round (docs/knowledge-bases.md, "The eighth round"): document
// expansion by each chunk's nearest chunks of the same base (Tao, Wang, Mei and Zhai,
// HLT-NAACL 2006; Liu and Croft, SIGIR 2004). Off while nbrK is 0; reverted once the round
// is decided.
var (
	nbrK        = 0     // neighbours per chunk
	nbrBeta     = 0.0   // the neighbours' mass, as a share of the chunk's own length
	nbrOtherSrc = false // neighbours from other sources only
	nbrMinSim   = 0.0   // neighbours below this cosine are not taken
	nbrFlat     = false // neighbours weighted alike instead of by similarity
	// score regularization over the same neighbour graph (Diaz, CIKM 2005): a chunk's
	// score becomes (1-regAlpha)·its own + regAlpha·its neighbours' (weighted by similarity)
	regAlpha = 0.0
)

type nbrLink struct {
	doc int32
	w   float64
}

// maybeExpand rebuilds the postings with each live document's terms smoothed by its
// neighbours', once after the index last changed.
func (ix *Index) maybeExpand() {
	if nbrK == 0 {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.expanded {
		return
	}
	ix.expanded = true
	ix.nbrs = nil
	var live []int32
	for n := range ix.docs {
		if !ix.docs[n].dead {
			live = append(live, int32(n))
		}
	}
	N := float64(len(live))
	df := map[string]float64{}
	for _, n := range live {
		for _, tc := range ix.docs[n].terms {
			df[tc.term]++
		}
	}
	// tf-idf vectors, unit length
	type entry struct {
		term string
		w    float64
	}
	vecs := make(map[int32][]entry, len(live))
	inv := map[string][]struct {
		doc int32
		w   float64
	}{}
	for _, n := range live {
		var v []entry
		norm := 0.0
		for _, tc := range ix.docs[n].terms {
			idf := math.Log(N / df[tc.term])
			w := (1 + math.Log(float64(tc.count))) * idf
			if tc.count < 1 {
				w = float64(tc.count) * idf
			}
			if w <= 0 {
				continue
			}
			v = append(v, entry{tc.term, w})
			norm += w * w
		}
		norm = math.Sqrt(norm)
		for i := range v {
			v[i].w /= norm
			inv[v[i].term] = append(inv[v[i].term], struct {
				doc int32
				w   float64
			}{n, v[i].w})
		}
		vecs[n] = v
	}
	ix.postings = map[string][]posting{}
	for _, n := range live {
		d := &ix.docs[n]
		sims := map[int32]float64{}
		for _, e := range vecs[n] {
			for _, o := range inv[e.term] {
				if o.doc != n {
					sims[o.doc] += e.w * o.w
				}
			}
		}
		type nb struct {
			doc int32
			sim float64
		}
		var nbs []nb
		for o, s := range sims {
			if s < nbrMinSim || (nbrOtherSrc && ix.docs[o].src == d.src) {
				continue
			}
			nbs = append(nbs, nb{o, s})
		}
		sort.Slice(nbs, func(i, j int) bool {
			if nbs[i].sim != nbs[j].sim {
				return nbs[i].sim > nbs[j].sim
			}
			return nbs[i].doc < nbs[j].doc
		})
		if len(nbs) > nbrK {
			nbs = nbs[:nbrK]
		}
		total := 0.0
		for i := range nbs {
			if nbrFlat {
				nbs[i].sim = 1
			}
			total += nbs[i].sim
		}
		if regAlpha > 0 {
			if ix.nbrs == nil {
				ix.nbrs = map[int32][]nbrLink{}
			}
			var links []nbrLink
			for _, b := range nbs {
				links = append(links, nbrLink{b.doc, b.sim / total})
			}
			ix.nbrs[n] = links
		}
		counts := map[string]float32{}
		order := []string{}
		for _, tc := range d.terms {
			counts[tc.term] = tc.count
			order = append(order, tc.term)
		}
		orig := map[string]float32{}
		for k, v := range counts {
			orig[k] = v
		}
		for _, b := range nbs {
			od := &ix.docs[b.doc]
			scale := nbrBeta * b.sim / total * float64(d.len) / float64(od.len)
			for _, tc := range od.terms {
				if _, ok := counts[tc.term]; !ok {
					order = append(order, tc.term)
				}
				counts[tc.term] += float32(scale * float64(tc.count))
			}
		}
		for _, t := range order {
			ix.postings[t] = append(ix.postings[t], posting{doc: n, tf: counts[t], otf: orig[t]})
		}
	}
}

// unexpandLocked restores the postings to the documents' own terms.
func (ix *Index) unexpandLocked() {
	if !ix.expanded {
		return
	}
	ix.expanded = false
	ix.postings = map[string][]posting{}
	for n := range ix.docs {
		d := &ix.docs[n]
		if d.dead {
			continue
		}
		for _, tc := range d.terms {
			ix.postings[tc.term] = append(ix.postings[tc.term], posting{doc: int32(n), tf: tc.count, otf: tc.count})
		}
	}
}

// regularizeLocked mixes each scored chunk's score with its neighbours'.
func (ix *Index) regularizeLocked(sc *scores) {
	if regAlpha == 0 || ix.nbrs == nil {
		return
	}
	next := make([]float64, len(sc.touched))
	for i, n := range sc.touched {
		m := 0.0
		for _, l := range ix.nbrs[n] {
			m += l.w * sc.score[l.doc]
		}
		next[i] = (1-regAlpha)*sc.score[n] + regAlpha*m
	}
	for i, n := range sc.touched {
		sc.score[n] = next[i]
	}
}

// Translation learned from the base itself by mutual information of chunk co-occurrence
// (Karimzadehgan and Zhai, SIGIR 2010): each question term u adds its miK terms w of
// highest normalized I(w;u), at miShare × p_t(w|u) / p_t(best|u) of a question word's
// weight, p_t(w|u) = I(w;u) / Σ I(·;u). Only question terms in at most miMaxDF of the
// chunks are expanded.
var (
	miK     = 0
	miShare = 0.0
	miMaxDF = 1.0
	miMinCo = 2
)

func (ix *Index) miExpandLocked(terms []string, weights []float64) ([]string, []float64) {
	if miK == 0 {
		return terms, weights
	}
	N := float64(ix.live)
	dfOf := func(t string) float64 {
		c := 0.0
		for _, p := range ix.postings[t] {
			if !ix.docs[p.doc].dead && p.otf > 0 {
				c++
			}
		}
		return c
	}
	orig := len(terms)
	for _, u := range terms[:orig] {
		nu := dfOf(u)
		if nu == 0 || nu/N > miMaxDF {
			continue
		}
		co := map[string]float64{}
		for _, p := range ix.postings[u] {
			d := &ix.docs[p.doc]
			if d.dead || p.otf == 0 {
				continue
			}
			for _, tc := range d.terms {
				if tc.term != u {
					co[tc.term]++
				}
			}
		}
		type cand struct {
			w  string
			mi float64
		}
		var cs []cand
		total := 0.0
		for w, nuw := range co {
			if int(nuw) < miMinCo {
				continue
			}
			nw := dfOf(w)
			mi := 0.0
			for _, xu := range []bool{true, false} {
				for _, xw := range []bool{true, false} {
					var c float64
					switch {
					case xu && xw:
						c = nuw
					case xu && !xw:
						c = nu - nuw
					case !xu && xw:
						c = nw - nuw
					default:
						c = N - nu - nw + nuw
					}
					pj := (c + 0.25) / (N + 1)
					pu, pw := nu, nw
					if !xu {
						pu = N - nu
					}
					if !xw {
						pw = N - nw
					}
					mi += pj * math.Log(pj/(((pu+0.5)/(N+1))*((pw+0.5)/(N+1))))
				}
			}
			if mi <= 0 {
				continue
			}
			total += mi
			cs = append(cs, cand{w, mi})
		}
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].mi != cs[j].mi {
				return cs[i].mi > cs[j].mi
			}
			return cs[i].w < cs[j].w
		})
		for i := 0; i < miK && i < len(cs); i++ {
			w := miShare * cs[i].mi / cs[0].mi
			if j := slicesIndex(terms, cs[i].w); j >= 0 {
				if j >= orig {
					weights[j] += w
				}
				continue
			}
			terms = append(terms, cs[i].w)
			weights = append(weights, w)
		}
	}
	return terms, weights
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// Term necessity (Zhao and Callan, SIGIR 2010): P(a question word is in the answer |
// it is in the question), estimated from outside question-answer pairs; an English
// question term's weight is multiplied by (necessity / mean)^necPow. Terms the pairs
// saw fewer than necMin times get the mean.
var (
	necTable map[string]float64
	necMean  = 0.0
	necPow   = 0.0
)

func necessityWeight(t string) float64 {
	if necPow == 0 {
		return 1
	}
	v, ok := necTable[t]
	if !ok {
		return 1
	}
	return math.Pow(v/necMean, necPow)
}
