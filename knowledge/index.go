package knowledge

import (
	"math"
	"runtime"
	"slices"
	"sync"
)

// Chunk is one retrievable piece of a source, as stored by the storage layer. Title is its
// source's title (a text's title, a file's name, a page's address), which the index weighs
// as heading evidence together with the Markdown headings the chunk falls under; it is not
// stored with the chunk. Vector, when embeddings are configured, is the chunk's embedding;
// lexical search ignores it.
type Chunk struct {
	ID       string
	SourceID string
	Title    string
	Text     string
	Vector   []float32
}

// Hit is a chunk that matched a query, with its score in [0, 1] and what found it.
type Hit struct {
	ChunkID  string
	SourceID string
	Text     string
	Score    float64
	Evidence Evidence
}

// BM25 parameters: the usual values from the literature, fine for paragraph-sized chunks.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// scoreSteepness shapes the normalized score; see normalizeScore.
const scoreSteepness = 1.6

// Index is an in-memory lexical index over chunks, ranked by BM25. It is safe for concurrent
// use: searches share a read lock, Add and Remove take the write lock. The storage layer
// persists chunks and rebuilds an Index from them, so the Index itself holds no state that
// cannot be recomputed from the chunks.
type Index struct {
	mu       sync.RWMutex
	docs     []doc              // by internal number; removed entries have dead set
	byID     map[string]int32   // chunk ID → internal number
	bySource map[string][]int32 // source ID → internal numbers
	postings map[string][]posting
	totalLen float64          // sum of live document lengths, for the average length
	srcNum   map[string]int32 // source ID → its number, for dense per-source arrays
	srcLen   []float64        // by source number: the sum of its live documents' lengths
	live     int
	dead     int
	langs    [numLanguages]int // live documents per language
	vectors  []*vectorMatrix   // the documents' vectors, one matrix per dimension
}

type doc struct {
	chunk Chunk
	len   float32 // weighted number of terms, for BM25's length normalization
	terms []termCount
	lang  language
	src   int32 // the source's number
	row   int32 // the row of its vector in the matrix of dimension dim
	dim   int32 // 0 without a vector
	dead  bool
	dated bool // names a year, a version or a month (answer_type.go)
}

// termCount is a term of a document with its weighted frequency: an occurrence in the
// text counts 1, one in the title or a heading above the text headingWeight.
type termCount struct {
	term  string
	count float32
}

type posting struct {
	doc int32
	tf  float32
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{byID: map[string]int32{}, bySource: map[string][]int32{}, postings: map[string][]posting{}, srcNum: map[string]int32{}}
}

// Len is the number of chunks in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.live
}

// Add indexes the chunks of one source, replacing whatever was indexed for that source before
// (so re-fetching a url or re-extracting a file is one call). Every chunk's SourceID is set to
// sourceID. A chunk whose ID is already indexed under another source replaces it there too.
func (ix *Index) Add(sourceID string, chunks []Chunk) {
	loadBackground() // once per process, here rather than in the first query (tens of ms)
	prepared, units := prepareDocs(sourceID, chunks)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeLocked(sourceID)
	for i, d := range prepared {
		if old, ok := ix.byID[d.chunk.ID]; ok {
			ix.dropDocLocked(old)
		}
		n := int32(len(ix.docs))
		ix.docs = append(ix.docs, d)
		ix.byID[d.chunk.ID] = n
		ix.bySource[sourceID] = append(ix.bySource[sourceID], n)
		for _, tc := range d.terms {
			ix.postings[tc.term] = append(ix.postings[tc.term], posting{doc: n, tf: tc.count})
		}
		ix.totalLen += float64(d.len)
		ix.docs[n].src = ix.sourceNumLocked(sourceID)
		ix.srcLen[ix.docs[n].src] += float64(d.len)
		ix.addVectorLocked(n, units[i])
		ix.live++
		ix.langs[d.lang]++
	}
	ix.maybeCompactLocked()
}

// prepareDocs tokenizes chunks before the write lock is taken: it is the expensive part of
// indexing, and readers go on meanwhile. Large batches (rebuilding an index from storage) are
// spread over the available CPUs. The chunks' vectors come back unit-scaled, for the
// index's matrix; the documents keep none.
func prepareDocs(sourceID string, chunks []Chunk) ([]doc, [][]float32) {
	prepared := make([]doc, len(chunks))
	units := make([][]float32, len(chunks))
	headings := headingsAbove(chunks)
	work := func(lo, hi int) {
		scratch := map[string]int{}
		for i := lo; i < hi; i++ {
			c := chunks[i]
			c.SourceID = sourceID
			units[i] = unitVector(c.Vector)
			prepared[i] = doc{chunk: c}
			prepared[i].chunk.Vector = nil
			prepared[i].terms, prepared[i].len, prepared[i].lang = countTerms(c.Text, c.Title+"\n"+headings[i], scratch)
			prepared[i].dated = isDated(c.Text)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(chunks)/128)
	if workers <= 1 {
		work(0, len(chunks))
		return prepared, units
	}
	var wg sync.WaitGroup
	per := (len(chunks) + workers - 1) / workers
	for lo := 0; lo < len(chunks); lo += per {
		wg.Go(func() { work(lo, min(len(chunks), lo+per)) })
	}
	wg.Wait()
	return prepared, units
}

// Remove drops every chunk of a source. Removing an unknown source does nothing.
func (ix *Index) Remove(sourceID string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeLocked(sourceID)
	ix.maybeCompactLocked()
}

func (ix *Index) removeLocked(sourceID string) {
	ids := ix.bySource[sourceID]
	delete(ix.bySource, sourceID) // first, so dropDocLocked does not edit the slice being ranged over
	for _, n := range ids {
		ix.dropDocLocked(n)
	}
}

// dropDocLocked marks a document dead. Its postings stay until compaction; searches skip
// them. Marking is O(1), so removing a large source does not rewrite every posting list.
func (ix *Index) dropDocLocked(n int32) {
	d := &ix.docs[n]
	if d.dead {
		return
	}
	d.dead = true
	ix.removeVectorLocked(n)
	ix.totalLen -= float64(d.len)
	ix.srcLen[d.src] -= float64(d.len)
	ix.live--
	ix.langs[d.lang]--
	ix.dead++
	delete(ix.byID, d.chunk.ID)
	if ids := ix.bySource[d.chunk.SourceID]; ids != nil {
		ix.bySource[d.chunk.SourceID] = slices.DeleteFunc(ids, func(x int32) bool { return x == n })
		if len(ix.bySource[d.chunk.SourceID]) == 0 {
			delete(ix.bySource, d.chunk.SourceID)
		}
	}
	d.chunk, d.terms = Chunk{ID: d.chunk.ID}, nil // free the text now
}

// maybeCompactLocked rebuilds the tables once dead entries outnumber live ones, which keeps
// memory and posting-list scans proportional to the live chunks at amortized O(1) per removal.
func (ix *Index) maybeCompactLocked() {
	if ix.dead < 1024 || ix.dead < ix.live {
		return
	}
	old, oldVectors := ix.docs, ix.vectors
	ix.docs = make([]doc, 0, ix.live)
	ix.vectors = nil
	ix.byID = make(map[string]int32, ix.live)
	ix.bySource = map[string][]int32{}
	ix.postings = map[string][]posting{}
	ix.srcNum, ix.srcLen = map[string]int32{}, nil
	for _, d := range old {
		if d.dead {
			continue
		}
		n := int32(len(ix.docs))
		d.src = ix.sourceNumLocked(d.chunk.SourceID)
		ix.srcLen[d.src] += float64(d.len)
		ix.docs = append(ix.docs, d)
		ix.byID[d.chunk.ID] = n
		ix.bySource[d.chunk.SourceID] = append(ix.bySource[d.chunk.SourceID], n)
		for _, tc := range d.terms {
			ix.postings[tc.term] = append(ix.postings[tc.term], posting{doc: n, tf: tc.count})
		}
		var unit []float32
		for _, m := range oldVectors {
			if int(d.dim) == m.dim {
				unit = m.row(d.row)
			}
		}
		ix.addVectorLocked(n, unit)
	}
	ix.dead = 0
}

// sourceNumLocked returns the number of a source, giving it one if it has none. Numbers of
// removed sources are reused only after a compaction renumbers them all.
func (ix *Index) sourceNumLocked(sourceID string) int32 {
	if n, ok := ix.srcNum[sourceID]; ok {
		return n
	}
	n := int32(len(ix.srcLen))
	ix.srcNum[sourceID] = n
	ix.srcLen = append(ix.srcLen, 0)
	return n
}

// countTerms returns the distinct terms of a chunk's text and heading (its source's title
// and the headings above it) with their weighted counts, in first-seen order
// (deterministic), the weighted number of terms, and the text's language, which the heading
// is analyzed in too. pos is scratch space, reused across chunks.
func countTerms(text, heading string, pos map[string]int) ([]termCount, float32, language) {
	toks, lang := analyze(text)
	clear(pos)
	out := make([]termCount, 0, len(toks)/2)
	var n float32
	add := func(terms []string, weight float32) {
		for _, t := range terms {
			n += weight
			if i, ok := pos[t]; ok {
				out[i].count += weight
				continue
			}
			pos[t] = len(out)
			out = append(out, termCount{term: t, count: weight})
		}
	}
	add(toks, 1)
	if headingWeight > 0 {
		add(analyzeAs(heading, lang), headingWeight)
	}
	return out, n, lang
}

// Search returns at most k chunks whose score for query is at least threshold, best first;
// equal scores are ordered by chunk ID so results are stable. Scores are normalized BM25 in
// [0, 1] (see normalizeScore). A query with no index terms, or k < 1, finds nothing.
func (ix *Index) Search(query string, k int, threshold float64) []Hit {
	if k < 1 {
		return nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	sc := ix.lexicalLocked(query)
	defer sc.release()
	top := newBest(ix, k)
	for _, n := range sc.touched {
		if s := sc.score[n]; s >= threshold {
			top.offer(n, s)
		}
	}
	return top.hits()
}

// scores holds one query's scores, dense by internal document number, with the list of
// documents that got one. Buffers are pooled: a map per query made the garbage collector
// the main source of tail latency over 10,000 chunks.
type scores struct {
	score   []float64
	touched []int32
}

var scoresPool = sync.Pool{New: func() any { return new(scores) }}

func newScores(n int) *scores {
	sc := scoresPool.Get().(*scores)
	if cap(sc.score) < n {
		sc.score = make([]float64, n)
	}
	sc.score = sc.score[:n]
	return sc
}

// release zeroes what was written and returns the buffers to the pool.
func (sc *scores) release() {
	for _, n := range sc.touched {
		sc.score[n] = 0
	}
	sc.touched = sc.touched[:0]
	scoresPool.Put(sc)
}

// get is the score of document n, 0 when it shares no term with the query.
func (sc *scores) get(n int) float64 {
	if n < len(sc.score) {
		return sc.score[n]
	}
	return 0
}

// lexicalLocked scores every live document sharing a term with the query. The caller must
// release the result.
func (ix *Index) lexicalLocked(query string) *scores {
	sc := newScores(len(ix.docs))
	if ix.live == 0 {
		return sc
	}
	var terms []string
	qterms, lang := ix.queryTerms(query)
	for _, t := range qterms {
		if !slices.Contains(terms, t) { // a repeated word does not count twice
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		return sc
	}
	n := float64(ix.live)
	avgLen := ix.totalLen / n
	if avgLen == 0 {
		avgLen = 1
	}
	ideal := 0.0
	src := newSourceScores(ix)
	for _, t := range terms {
		ps := ix.postings[t]
		df := 0
		for _, p := range ps {
			if d := &ix.docs[p.doc]; !d.dead {
				df++
				src.count(d.src, float64(p.tf))
			}
		}
		src.endTerm()
		idf := termIDF(t, n, df, lang)
		ideal += idf
		for _, p := range ps {
			d := &ix.docs[p.doc]
			if d.dead {
				continue
			}
			tf := float64(p.tf)
			if sc.score[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			sc.score[p.doc] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(d.len)/avgLen))
		}
	}
	when := asksWhen(query)
	for _, n := range sc.touched {
		chunk := normalizeScore(sc.score[n], ideal)
		if when && ix.docs[n].dated {
			chunk = min(1, chunk+whenBonus) // a score stays within [0, 1]
		}
		sc.score[n] = (1-sourceWeight)*chunk + sourceWeight*src.score(ix.docs[n].src)
	}
	src.release()
	return sc
}

// normalizeScore maps a raw BM25 score into [0, 1] so that a fixed similarity threshold
// (0.30 to 0.95 in agent configuration) means the same thing for every query and corpus.
//
// The reference is the score of an ideal chunk: one of average length that contains every
// query term exactly once, which BM25 scores at Σ idf(t), since its term-frequency factor is
// then exactly 1. The ratio x = raw/ideal says how much of the query's weight a chunk covers,
// rarer words counting more. x may pass 1 (a term repeated, a short chunk), so it goes
// through the saturating 1 − e^(−1.6x), which keeps the order of raw scores:
//
//	x = 0.1 (one common word shared)          → 0.15
//	x = 0.2 (one of five words shared)        → 0.27
//	x = 0.5 (half the query's weight present)  → 0.55
//	x = 1 (every word present once)            → 0.80
//	x = 2 (every word, repeated or dense)      → 0.96
//
// A chunk that answers the question usually covers most of its rare words and lands well
// above 0.5; one that shares a single stray word with a longer question stays under 0.3.
// The steepness was chosen on the fixture corpus (quality_test.go): 2.0 put a one-word
// coincidence ("leather goods" for "a good novel") at 0.29, too close to the lowest threshold.
func normalizeScore(raw, ideal float64) float64 {
	if ideal <= 0 || raw <= 0 {
		return 0
	}
	return 1 - math.Exp(-scoreSteepness*raw/ideal)
}
