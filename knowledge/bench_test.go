package knowledge

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// syntheticCorpus returns n chunk-sized texts of about 800 characters: sentences of the
// fixture corpus mixed with words drawn from a Zipf distribution over a 30,000-word
// vocabulary, so term statistics look like real text rather than repetitions.
func syntheticCorpus(tb testing.TB, n int) []string {
	tb.Helper()
	rng := rand.New(rand.NewSource(42))
	var sentences []string
	paths, _ := filepath.Glob("testdata/corpus/*")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		sentences = append(sentences, splitSentences(strings.ReplaceAll(string(b), "\n", " "))...)
	}
	vocab := make([]string, 30000)
	syll := []string{"ka", "lo", "mi", "ren", "tas", "po", "vi", "ne", "dor", "sul", "ga", "fe"}
	for i := range vocab {
		var w strings.Builder
		for j := 0; j < 2+rng.Intn(3); j++ {
			w.WriteString(syll[rng.Intn(len(syll))])
		}
		vocab[i] = w.String()
	}
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for b.Len() < 800 {
			if rng.Intn(3) == 0 {
				b.WriteString(strings.TrimSpace(sentences[rng.Intn(len(sentences))]))
			} else {
				for j := 0; j < 12; j++ {
					b.WriteString(vocab[zipf.Uint64()])
					b.WriteByte(' ')
				}
				b.WriteString("end.")
			}
			b.WriteByte(' ')
		}
		out[i] = b.String()
	}
	return out
}

// build10k indexes 10,000 synthetic chunks in 100 sources, with random vectors of dim
// dimensions when dim > 0.
func build10k(tb testing.TB, dim int) *Index {
	tb.Helper()
	texts := syntheticCorpus(tb, 10000)
	rng := rand.New(rand.NewSource(9))
	ix := NewIndex()
	for s := 0; s < 100; s++ { // 100 sources of 100 chunks
		chunks := make([]Chunk, 100)
		for i := range chunks {
			chunks[i] = Chunk{ID: fmt.Sprintf("c%05d", s*100+i), Text: texts[s*100+i]}
			if dim > 0 {
				chunks[i].Vector = randomVector(rng, dim)
			}
		}
		ix.Add(fmt.Sprintf("src%03d", s), chunks)
	}
	return ix
}

// BenchmarkSearch10k measures one lexical query over 10,000 chunks of about 800
// characters, and reports the median and 99th percentile latency over the fixture
// questions, both back to back and paced (see arrivals).
func BenchmarkSearch10k(b *testing.B) {
	ix := build10k(b, 0)
	qs := loadQuestions(b)
	runtime.GC() // the build's garbage is not the queries'
	for _, a := range arrivals {
		b.Run("arrival="+a.name, func(b *testing.B) {
			reportLatency(b, a.pause, func(i int) { ix.Search(qs[i%len(qs)].Question, 5, 0.3) })
		})
	}
}

// arrivals are the two ways the latency benchmarks send queries. Back to back, the
// benchmark's thread never waits, and on a loaded machine the kernel's scheduler treats it
// as a batch job that yields its core to whatever wakes up, several milliseconds at a time:
// at a load of 10 that hit 3% of lexical queries. Paced, each query follows a pause, as a
// server's requests follow its wait for them, and the thread is scheduled like a server's.
var arrivals = []struct {
	name  string
	pause time.Duration
}{
	{"back-to-back", 0},
	{"paced", 200 * time.Microsecond},
}

// BenchmarkSearchHybrid10k measures one hybrid query (lexical and vector evidence fused)
// over 10,000 chunks with vectors of 384 and 768 dimensions, the query already embedded:
// the provider's own time is not voiceapi's.
func BenchmarkSearchHybrid10k(b *testing.B) {
	for _, dim := range []int{384, 768} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			ix := build10k(b, dim)
			qs := loadQuestions(b)
			rng := rand.New(rand.NewSource(7))
			vecs := make([][]float32, len(qs))
			for i := range vecs {
				vecs[i] = randomVector(rng, dim)
			}
			runtime.GC()
			for _, a := range arrivals {
				b.Run("arrival="+a.name, func(b *testing.B) {
					reportLatency(b, a.pause, func(i int) {
						ix.SearchHybrid(qs[i%len(qs)].Question, vecs[i%len(qs)], 5, 0.3, DefaultFusion)
					})
				})
			}
		})
	}
}

// BenchmarkVectorScan10k measures the vector side alone (every similarity and the 50
// nearest chunks) over 10,000 chunks of 768 dimensions, in one pass and split over two
// CPUs: what decides parallelScan (docs/performance.md).
func BenchmarkVectorScan10k(b *testing.B) {
	ix := build10k(b, 768)
	rng := rand.New(rand.NewSource(7))
	q := unitVector(randomVector(rng, 768))
	for _, parts := range []int{1, 2} {
		b.Run(fmt.Sprintf("parts=%d", parts), func(b *testing.B) {
			runtime.GC()
			reportLatency(b, 0, func(int) {
				vs := vectorScratchPool.Get().(*vectorScratch)
				ix.mu.RLock()
				vs.similarities(ix, ix.matrixLocked(768), q, parts)
				ix.mu.RUnlock()
				vs.release()
			})
		})
	}
}

// reportLatency runs query b.N times, after a pause each time when pause > 0, and reports
// the median and 99th percentile of the wall time, the CPU time the process spent per
// query on average and at the 99th percentile (getrusage around each query: user and
// system, every thread, the garbage collector's included; the pauses not counted) and the
// allocations. On a shared, loaded machine the wall time includes waiting for a
// core; the CPU time is the work, and its p99 says whether the tail is work or waiting.
//
// The first queries after building an index were measured waiting for a core for up to
// 36 ms at 2 ms of CPU, 20 in a row, while the rest of the run waited for almost none:
// the build's seconds of CPU count against the benchmark's thread with the kernel's
// scheduler for a while. That is the benchmark's doing, not the query's, so warmupQueries
// run unmeasured first.
func reportLatency(b *testing.B, pause time.Duration, query func(i int)) {
	b.ReportAllocs()
	for i := range warmupQueries {
		query(i)
	}
	lat := make([]time.Duration, 0, b.N)
	cpus := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if pause > 0 {
			b.StopTimer()
			time.Sleep(pause)
			b.StartTimer()
		}
		before := processCPU(b)
		start := time.Now()
		query(i)
		lat = append(lat, time.Since(start))
		cpus = append(cpus, processCPU(b)-before)
	}
	b.StopTimer()
	var cpu time.Duration
	for _, c := range cpus {
		cpu += c
	}
	slices.Sort(lat)
	slices.Sort(cpus)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
	b.ReportMetric(float64(cpus[len(cpus)*99/100].Microseconds())/1000, "cpu-p99-ms")
}

// warmupQueries is how many queries reportLatency runs before measuring: two passes over
// the fixture questions.
const warmupQueries = 62

func randomVector(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// BenchmarkChunkAndIndex measures ChunkText followed by Add, in bytes of source text per
// second, building a 10,000-chunk index from scratch each iteration.
func BenchmarkChunkAndIndex(b *testing.B) {
	texts := syntheticCorpus(b, 10000)
	docs := make([]string, 100) // 100 documents of about 80 KB
	for i := range docs {
		docs[i] = strings.Join(texts[i*100:(i+1)*100], "\n\n")
	}
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	b.SetBytes(int64(total))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix := NewIndex()
		for s, d := range docs {
			var chunks []Chunk
			for j, c := range ChunkText(d, ChunkOptions{}) {
				chunks = append(chunks, Chunk{ID: fmt.Sprintf("%d-%d", s, j), Text: c})
			}
			ix.Add(fmt.Sprint(s), chunks)
		}
	}
}

// BenchmarkRebuild10k measures what the storage layer does on first use of a knowledge base:
// an Index built from 10,000 stored chunks (about 8 MB of text) in 100 sources.
func BenchmarkRebuild10k(b *testing.B) {
	texts := syntheticCorpus(b, 10000)
	sources := make([][]Chunk, 100)
	total := 0
	for i, t := range texts {
		sources[i/100] = append(sources[i/100], Chunk{ID: fmt.Sprintf("c%05d", i), Text: t})
		total += len(t)
	}
	b.SetBytes(int64(total))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix := NewIndex()
		for s, chunks := range sources {
			ix.Add(fmt.Sprint(s), chunks)
		}
	}
}

// BenchmarkExtract measures extraction throughput per format on the fixtures, in input
// bytes per second.
func BenchmarkExtract(b *testing.B) {
	big := strings.Join(syntheticCorpus(b, 200), "\n\n") // about 160 KB of text
	var csvB, jsonB, htmlB strings.Builder
	csvB.WriteString("question,answer,category\n")
	jsonB.WriteString("[")
	htmlB.WriteString("<html><body>")
	for i, t := range syntheticCorpus(b, 200) {
		fmt.Fprintf(&csvB, "%q,%q,cat%d\n", t[:60], t[60:], i%7)
		if i > 0 {
			jsonB.WriteString(",")
		}
		fmt.Fprintf(&jsonB, `{"id": %d, "text": %q}`, i, t)
		fmt.Fprintf(&htmlB, "<h2>Item %d</h2><p>%s</p><script>x()</script>", i, t)
	}
	jsonB.WriteString("]")
	htmlB.WriteString("</body></html>")
	cases := []struct {
		name    string
		kind    Kind
		content []byte
	}{
		{"text", KindText, []byte(big)},
		{"csv", KindCSV, []byte(csvB.String())},
		{"json", KindJSON, []byte(jsonB.String())},
		{"html", KindHTML, []byte(htmlB.String())},
		{"pdf", KindPDF, readFixture(b, "returns.pdf")},
		{"docx", KindDOCX, readFixture(b, "returns.docx")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.content)))
			for i := 0; i < b.N; i++ {
				if _, err := Extract(c.kind, c.content); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSearch10kLatency keeps the latency target of issue 4 (p50 under 5 ms over 10,000
// chunks) under test, with a generous margin for slow or loaded machines.
func TestSearch10kLatency(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds a 10,000-chunk index and times it; meaningless under the race detector")
	}
	start := time.Now()
	ix := build10k(t, 0)
	t.Logf("indexed 10,000 chunks in %v", time.Since(start))
	qs := loadQuestions(t)
	var lat []time.Duration
	for round := 0; round < 3; round++ {
		for _, q := range qs {
			s := time.Now()
			hits := ix.Search(q.Question, 5, 0.3)
			lat = append(lat, time.Since(s))
			if len(hits) > 5 {
				t.Fatalf("%d hits for k=5", len(hits))
			}
		}
	}
	slices.Sort(lat)
	p50 := lat[len(lat)/2]
	t.Logf("query latency over 10,000 chunks: p50 %v, max %v", p50, lat[len(lat)-1])
	if p50 > 50*time.Millisecond {
		t.Errorf("p50 %v, target 5 ms", p50)
	}
}
