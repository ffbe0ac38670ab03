package knowledge

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// oracleHybrid is SearchHybrid's linear fusion written the plain way, from the live chunks
// and their original vectors: cosine in float64, every chunk sorted, no matrix, no heap.
func oracleHybrid(ix *Index, live map[string]Chunk, query string, qv []float32, k int, threshold float64) []Hit {
	lexical := map[string]float64{}
	for _, h := range ix.Search(query, len(live)+1, 0) {
		lexical[h.ChunkID] = h.Score
	}
	type cand struct {
		id  string
		sim float64
	}
	var sims []cand
	for id, c := range live {
		if len(c.Vector) != len(qv) {
			continue
		}
		var d, na, nb float64
		for i := range qv {
			d += float64(qv[i]) * float64(c.Vector[i])
			na += float64(qv[i]) * float64(qv[i])
			nb += float64(c.Vector[i]) * float64(c.Vector[i])
		}
		if s := min(1, d/math.Sqrt(na*nb)); s > 0 {
			sims = append(sims, cand{id, s})
		}
	}
	slices.SortFunc(sims, func(a, b cand) int {
		if a.sim != b.sim {
			if a.sim > b.sim {
				return -1
			}
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	near := map[string]bool{}
	simOf := map[string]float64{}
	for i, c := range sims {
		simOf[c.id] = c.sim
		if i < vectorCandidates {
			near[c.id] = true
		}
	}
	var hits []Hit
	for id := range live {
		if lexical[id] == 0 && !near[id] {
			continue
		}
		s := min(1, 0.5*simOf[id]+0.5*lexical[id])
		if s > 0 && s >= threshold {
			hits = append(hits, Hit{ChunkID: id, Score: s})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
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

// TestHybridMatchesOracle: over an index changed by adds, replacements and removals (enough
// to compact it), with chunks lacking vectors or holding another dimension's, hybrid search
// over the matrix finds what the plain computation finds.
func TestHybridMatchesOracle(t *testing.T) {
	simd := dotKernel
	defer func() { dotKernel = simd }()
	for name, kernel := range map[string]func(a, b []float32) float32{"go": dot, "kernel": simd} {
		t.Run(name, func(t *testing.T) {
			dotKernel = kernel
			testHybridMatchesOracle(t)
		})
	}
}

func testHybridMatchesOracle(t *testing.T) {
	m := newHybridModel()
	for s := range 60 {
		m.addSource(s)
	}
	m.check(t, 0)
	for step := 1; step <= 200; step++ {
		s := m.rng.Intn(60)
		if m.rng.Intn(3) == 0 {
			m.removeSource(s)
		} else {
			m.addSource(s)
		}
		if step%20 == 0 {
			m.check(t, step)
		}
	}
	m.checkCompacted(t)
}

// hybridModel is an index beside the chunks it should hold, changed at random.
type hybridModel struct {
	rng     *rand.Rand
	words   []string
	ix      *Index
	live    map[string]Chunk
	sources map[string][]string
	removed int // chunks removed or replaced so far
}

// hybridDim is the dimension of the model's vectors.
const hybridDim = 24

// newHybridModel starts an empty index and model, with the seeded randomness.
func newHybridModel() *hybridModel {
	return &hybridModel{
		rng:     rand.New(rand.NewSource(11)),
		words:   strings.Fields("parcel refund card delivery hours open monday invoice password account email phone code address office"),
		ix:      NewIndex(),
		live:    map[string]Chunk{},
		sources: map[string][]string{},
	}
}

// forget drops source src's chunks from the model.
func (m *hybridModel) forget(src string) {
	m.removed += len(m.sources[src])
	for _, id := range m.sources[src] {
		delete(m.live, id)
	}
	m.sources[src] = nil
}

// addSource adds or replaces source s with 1 to 40 chunks of random words, most with a
// vector, some with another model's dimension, some with none.
func (m *hybridModel) addSource(s int) {
	src := fmt.Sprintf("s%03d", s)
	m.forget(src)
	chunks := make([]Chunk, 1+m.rng.Intn(40))
	for i := range chunks {
		var text []string
		for range 3 + m.rng.Intn(8) {
			text = append(text, m.words[m.rng.Intn(len(m.words))])
		}
		c := Chunk{ID: fmt.Sprintf("%s:%d", src, i), SourceID: src, Text: strings.Join(text, " ")}
		switch r := m.rng.Intn(10); {
		case r < 7:
			c.Vector = randomVector(m.rng, hybridDim)
		case r < 8:
			c.Vector = randomVector(m.rng, hybridDim/2) // another model's dimension
		}
		chunks[i] = c
		m.live[c.ID] = c
		m.sources[src] = append(m.sources[src], c.ID)
	}
	m.ix.Add(src, chunks)
}

// removeSource removes source s from the index and the model.
func (m *hybridModel) removeSource(s int) {
	src := fmt.Sprintf("s%03d", s)
	m.ix.Remove(src)
	m.forget(src)
}

// check runs five random queries and checks hybrid search finds what the oracle finds.
func (m *hybridModel) check(t *testing.T, step int) {
	t.Helper()
	for range 5 {
		qv := randomVector(m.rng, hybridDim)
		query := m.words[m.rng.Intn(len(m.words))] + " " + m.words[m.rng.Intn(len(m.words))]
		got := m.ix.SearchHybrid(query, qv, 10, 0.2, DefaultFusion)
		want := oracleHybrid(m.ix, m.live, query, qv, 10, 0.2)
		if len(got) != len(want) {
			t.Fatalf("step %d, %q: %d hits, oracle %d", step, query, len(got), len(want))
		}
		for i := range got {
			if got[i].ChunkID != want[i].ChunkID && math.Abs(got[i].Score-want[i].Score) > 1e-5 {
				t.Fatalf("step %d, %q, hit %d: %s %.6f, oracle %s %.6f", step, query, i, got[i].ChunkID, got[i].Score, want[i].ChunkID, want[i].Score)
			}
			if math.Abs(got[i].Score-want[i].Score) > 1e-5 {
				t.Fatalf("step %d, hit %d: score %.7f, oracle %.7f", step, i, got[i].Score, want[i].Score)
			}
		}
	}
}

// checkCompacted checks the index compacted: fewer dead chunks than removed, and
// removed rows dropped from the matrices.
func (m *hybridModel) checkCompacted(t *testing.T) {
	t.Helper()
	ix := m.ix
	ix.mu.RLock()
	if ix.dead >= m.removed {
		t.Errorf("%d chunks removed, %d dead: the index never compacted", m.removed, ix.dead)
	}
	rows := 0
	for _, mx := range ix.vectors {
		rows += mx.rows()
	}
	ix.mu.RUnlock()
	if rows > 2*len(m.live)+1024 {
		t.Errorf("%d matrix rows for %d live chunks: removed rows are never dropped", rows, len(m.live))
	}
}

// TestScanAcrossCPUs: a scan split into parts finds the same similarities and the same
// nearest rows as one pass.
func TestScanAcrossCPUs(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	ix := NewIndex()
	chunks := make([]Chunk, 5000)
	for i := range chunks {
		chunks[i] = Chunk{ID: fmt.Sprintf("c%05d", i), Text: "text", Vector: randomVector(rng, 16)}
	}
	chunks[17].Vector = slices.Clone(chunks[4000].Vector) // a tie, broken by chunk ID
	ix.Add("s", chunks)
	q := unitVector(chunks[4000].Vector)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	m := ix.matrixLocked(16)
	one := vectorScratchPool.Get().(*vectorScratch)
	defer one.release()
	want := slices.Clone(one.similarities(ix, m, q, 1))
	if want[0].row != 17 || want[1].row != 4000 {
		t.Fatalf("nearest %v, want rows 17 then 4000 (equal similarity, c00017 < c04000)", want[:2])
	}
	for _, parts := range []int{2, 3, 7} {
		vs := vectorScratchPool.Get().(*vectorScratch)
		got := vs.similarities(ix, m, q, parts)
		if !slices.Equal(got, want) || !slices.Equal(vs.sims, one.sims) {
			t.Errorf("%d parts: nearest or similarities differ from one pass", parts)
		}
		vs.release()
	}
}

// TestDot: the unrolled dot product and the kernel the scans use (AVX2 and FMA where the
// processor has them) equal the plain sum for every length, across each loop's remainder,
// and at every alignment.
func TestDot(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for n := range 140 {
		for offset := range 3 {
			a := randomVector(rng, n+offset)[offset:]
			b := randomVector(rng, n+offset+2)[offset:] // longer than a: only len(a) counts
			var want float64
			for i := range a {
				want += float64(a[i]) * float64(b[i])
			}
			for name, f := range map[string]func(a, b []float32) float32{"dot": dot, "dotKernel": dotKernel} {
				if got := float64(f(a, b)); math.Abs(got-want) > 1e-4*(1+math.Sqrt(float64(n))) {
					t.Errorf("%s, length %d at offset %d: %v, want %v", name, n, offset, got, want)
				}
			}
		}
	}
}

// FuzzDotKernel: the scans' kernel agrees with the plain sum on any input whose products
// stay finite in float32 (past that, summing in another order may overflow differently).
func FuzzDotKernel(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64})
	f.Fuzz(func(t *testing.T, raw []byte) {
		v := make([]float32, len(raw)/4)
		for i := range v {
			v[i] = math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
		}
		a, b := v[:len(v)/2], v[len(v)/2:]
		var want, scale float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
			scale += math.Abs(float64(a[i]) * float64(b[i]))
		}
		if math.IsNaN(scale) || scale > 1e30 {
			return
		}
		if got := float64(dotKernel(a, b)); !(math.Abs(got-want) <= 1e-5*scale+1e-30) {
			t.Fatalf("%v, want %v (length %d)", got, want, len(a))
		}
	})
}

// TestHybridAllocationsDoNotGrowWithChunks: the vector side of a query allocates per query,
// never per chunk (the scan, its similarities and its nearest rows use pooled buffers).
func TestHybridAllocationsDoNotGrowWithChunks(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled buffers at random, so allocations vary")
	}
	allocs := func(n int) float64 {
		rng := rand.New(rand.NewSource(int64(n)))
		ix := NewIndex()
		chunks := make([]Chunk, n)
		for i := range chunks {
			chunks[i] = Chunk{ID: fmt.Sprintf("c%05d", i), Text: "refund card parcel", Vector: randomVector(rng, 64)}
		}
		ix.Add("s", chunks)
		qv := randomVector(rng, 64)
		ix.SearchHybrid("refund", qv, 5, 0, DefaultFusion) // fills the pools
		return testing.AllocsPerRun(20, func() { ix.SearchHybrid("refund", qv, 5, 0, DefaultFusion) })
	}
	small, large := allocs(100), allocs(20000)
	if large > small {
		t.Errorf("%v allocations per query over 20,000 chunks, %v over 100", large, small)
	}
}
