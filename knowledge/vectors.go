package knowledge

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// vectorMatrix holds the unit-scaled vectors of one dimension, one row per document, in
// one contiguous slice: a similarity scan then reads memory in order, with no pointer to
// follow and no allocation per chunk. A removed document's row is zeroed (its similarity
// is 0, which never counts) and dropped at the next compaction.
type vectorMatrix struct {
	dim  int
	data []float32 // row r is data[r*dim : (r+1)*dim]
	docs []int32   // row → document number, -1 once removed
}

func (m *vectorMatrix) rows() int { return len(m.docs) }

func (m *vectorMatrix) row(r int32) []float32 {
	return m.data[int(r)*m.dim : (int(r)+1)*m.dim : (int(r)+1)*m.dim]
}

// add appends a unit vector of the matrix's dimension for document n and returns its row.
func (m *vectorMatrix) add(n int32, unit []float32) int32 {
	m.data = append(m.data, unit...)
	m.docs = append(m.docs, n)
	return int32(len(m.docs) - 1)
}

// remove zeroes row r.
func (m *vectorMatrix) remove(r int32) {
	clear(m.row(r))
	m.docs[r] = -1
}

// matrixLocked returns the matrix of dimension dim, nil when no document has one.
// Documents embedded by one model share one dimension; another appears only while a
// knowledge base moves to another model.
func (ix *Index) matrixLocked(dim int) *vectorMatrix {
	for _, m := range ix.vectors {
		if m.dim == dim {
			return m
		}
	}
	return nil
}

// addVectorLocked stores document n's unit vector, if it has one.
func (ix *Index) addVectorLocked(n int32, unit []float32) {
	d := &ix.docs[n]
	d.row, d.dim = -1, 0
	if len(unit) == 0 {
		return
	}
	m := ix.matrixLocked(len(unit))
	if m == nil {
		m = &vectorMatrix{dim: len(unit)}
		ix.vectors = append(ix.vectors, m)
	}
	d.row, d.dim = m.add(n, unit), int32(len(unit))
}

// removeVectorLocked zeroes document n's row.
func (ix *Index) removeVectorLocked(n int32) {
	if d := &ix.docs[n]; d.dim > 0 {
		ix.matrixLocked(int(d.dim)).remove(d.row)
		d.row, d.dim = -1, 0
	}
}

// unitVector returns v scaled to length 1, nil for an empty, zero or non-finite vector.
// Documents keep their vectors unit-scaled, so a similarity is one dot product.
func unitVector(v []float32) []float32 {
	return unitVectorInto(nil, v)
}

// unitVectorInto is unitVector writing into dst's storage when it is large enough.
func unitVectorInto(dst, v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return nil
	}
	n := float32(1 / math.Sqrt(s))
	out := slices.Grow(dst[:0], len(v))[:len(v)]
	for i, x := range v {
		out[i] = x * n
	}
	return out
}

// dotKernel computes the similarity scans' dot products: dot, or on processors with AVX2
// and FMA the same sum eight lanes at a time (dot_amd64.s), several times faster.
var dotKernel = dot

// dot is the dot product of two vectors of equal length. The Go compiler does not turn
// loops into SIMD instructions, so the loop is unrolled by hand into four independent
// sums: the multiply-adds of one step do not wait for each other and the processor runs
// them side by side, and the bounds are checked once per four elements. Four sums measured
// faster than eight (2.2 against 3.1 ms of CPU for 10,000 × 768; eight sums and their
// operands no longer fit in the SSE registers) and than array-pointer steps
// (docs/performance.md).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// nearest keeps the k rows most similar to a query, as a min-heap whose root is the
// worst kept: most rows of a scan cost one comparison with it, and no list of every
// similarity is ever sorted. Equal similarities are ordered by chunk ID, so which of
// them is kept does not depend on the order of the rows.
type nearest struct {
	k     int
	items []rowSim
	ix    *Index
	m     *vectorMatrix
}

type rowSim struct {
	row int32
	sim float32
}

// better reports whether a ranks before b.
func (h *nearest) better(a, b rowSim) bool {
	if a.sim != b.sim {
		return a.sim > b.sim
	}
	return strings.Compare(h.ix.docs[h.m.docs[a.row]].chunk.ID, h.ix.docs[h.m.docs[b.row]].chunk.ID) < 0
}

// full reports whether k rows are kept; then floor is the least similarity kept.
func (h *nearest) full() bool { return len(h.items) == h.k }

func (h *nearest) floor() float32 { return h.items[0].sim }

// offer considers row r with similarity s.
func (h *nearest) offer(r int32, s float32) {
	it := rowSim{r, s}
	if len(h.items) < h.k {
		h.items = append(h.items, it)
		h.up(len(h.items) - 1)
		return
	}
	if !h.better(it, h.items[0]) {
		return
	}
	h.items[0] = it
	h.down(0)
}

func (h *nearest) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.better(h.items[p], h.items[i]) {
			return
		}
		h.items[p], h.items[i] = h.items[i], h.items[p]
		i = p
	}
}

func (h *nearest) down(i int) {
	for {
		worst, l := i, 2*i+1
		if l < len(h.items) && h.better(h.items[worst], h.items[l]) {
			worst = l
		}
		if r := l + 1; r < len(h.items) && h.better(h.items[worst], h.items[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h.items[i], h.items[worst] = h.items[worst], h.items[i]
		i = worst
	}
}

// sorted orders the kept rows best first (the heap is no longer one afterwards).
func (h *nearest) sorted() []rowSim {
	slices.SortFunc(h.items, func(a, b rowSim) int {
		if h.better(a, b) {
			return -1
		}
		return 1
	})
	return h.items
}

// scan computes the similarity of q with rows lo to hi into sims and offers the positive
// ones to near: a negative cosine means unrelated, not "less than unrelated".
func (m *vectorMatrix) scan(q []float32, sims []float32, near *nearest, lo, hi int) {
	for r := lo; r < hi; r++ {
		s := min(1, dotKernel(q, m.data[r*m.dim:(r+1)*m.dim]))
		sims[r] = s
		if s > 0 && (!near.full() || s >= near.floor()) {
			near.offer(int32(r), s)
		}
	}
}

// vectorScratch is one hybrid query's buffers, pooled so that a query allocates nothing
// for its vector side: the query's unit vector, every row's similarity, the nearest rows,
// and their ranks by row.
type vectorScratch struct {
	q     []float32
	sims  []float32
	near  nearest
	parts []nearest
	rank  []int32 // by row: 1 + the row's place among the nearest, 0 when not among them
}

var vectorScratchPool = sync.Pool{New: func() any { return new(vectorScratch) }}

// parallelScan is the work (rows × dimensions) a scan needs per part before it is split
// over the CPUs: about a tenth of a millisecond, against the few microseconds of starting
// a goroutine and waiting for it.
const parallelScan = 1 << 20

// scanParts is how many parts a scan of m is split into.
func scanParts(m *vectorMatrix) int {
	if m == nil {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), m.rows()*m.dim/parallelScan))
}

// similarities computes the similarity of q with every row of m, in parts running side by
// side, and returns the vectorCandidates nearest rows, best first; nil when m is nil.
func (vs *vectorScratch) similarities(ix *Index, m *vectorMatrix, q []float32, parts int) []rowSim {
	if m == nil {
		return nil
	}
	rows := m.rows()
	vs.sims = slices.Grow(vs.sims[:0], rows)[:rows]
	vs.rank = slices.Grow(vs.rank[:0], rows)[:rows]
	vs.near = nearest{k: vectorCandidates, items: vs.near.items[:0], ix: ix, m: m}
	if parts <= 1 {
		m.scan(q, vs.sims, &vs.near, 0, rows)
	} else {
		// Each part keeps its own nearest rows, merged once all are done. The first part
		// runs on the calling goroutine, which would otherwise only wait: one goroutine
		// fewer to start and to be scheduled.
		vs.parts = slices.Grow(vs.parts[:0], parts)[:parts]
		per := (rows + parts - 1) / parts
		var wg sync.WaitGroup
		for p := range vs.parts {
			vs.parts[p] = nearest{k: vectorCandidates, items: vs.parts[p].items[:0], ix: ix, m: m}
			if p > 0 {
				lo, hi := p*per, min(rows, (p+1)*per)
				wg.Go(func() { m.scan(q, vs.sims, &vs.parts[p], lo, hi) })
			}
		}
		m.scan(q, vs.sims, &vs.parts[0], 0, min(rows, per))
		wg.Wait()
		for p := range vs.parts {
			for _, it := range vs.parts[p].items {
				vs.near.offer(it.row, it.sim)
			}
		}
	}
	near := vs.near.sorted()
	for i, it := range near {
		vs.rank[it.row] = int32(i + 1)
	}
	return near
}

// release clears what the query wrote and returns the buffers to the pool.
func (vs *vectorScratch) release() {
	for _, it := range vs.near.items {
		vs.rank[it.row] = 0
	}
	vs.near.ix, vs.near.m = nil, nil
	for p := range vs.parts {
		vs.parts[p].ix, vs.parts[p].m = nil, nil
	}
	vectorScratchPool.Put(vs)
}
