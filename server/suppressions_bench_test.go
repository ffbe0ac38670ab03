package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/validate"
)

// heapPeak samples the process's heap in use every 50 ms until stopped (the server runs
// in the benchmark's process), returning the peak.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); <-ended; return peak.Load() }
}

// heapInUse is the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// suppressionBenchSize is the list's size: VOICEAPI_SUPPRESSION_BENCH_N, else the bound.
func suppressionBenchSize(b *testing.B) int {
	v := os.Getenv("VOICEAPI_SUPPRESSION_BENCH_N")
	if v == "" {
		return validate.MaxSuppressions
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > validate.MaxSuppressions {
		b.Fatalf("VOICEAPI_SUPPRESSION_BENCH_N=%q: want a whole number from 1 to %d", v, validate.MaxSuppressions)
	}
	return n
}

// BenchmarkSuppressionListRoundTrip: a workspace listing suppressionBenchSize numbers (the
// bound), each with a short reason, is exported through HTTP (streamed and discarded), and
// the document imported into a fresh workspace, on the engine the tests run on (bbolt
// with fsync on, as production runs it). Each reports its time, the document's size and
// the heap in use before and at its peak; the import's "before" holds the document the
// benchmark sends.
func BenchmarkSuppressionListRoundTrip(b *testing.B) {
	n := suppressionBenchSize(b)
	s := testkit.NewServer(b, func(o *bolt.Options) { o.NoSync = false })
	ctx := testkit.As(&data.User{ID: s.Owner.ID, PersonalWorkspaceID: s.Owner.WorkspaceID})
	reason := "asked on a call"
	for first := 0; first < n; first += validate.MaxSuppressionImport {
		rows := make([]data.SuppressionCreate, min(validate.MaxSuppressionImport, n-first))
		for i := range rows {
			rows[i] = data.SuppressionCreate{PhoneNumber: fmt.Sprintf("+1415%07d", 2_000_000+first+i), Reason: &reason}
		}
		if _, err := s.Svc.Suppressions.ImportSuppressions(ctx, rows); err != nil {
			b.Fatal(err)
		}
	}
	exportPath := s.URL + "/api/v1/workspaces/" + s.Owner.WorkspaceID + "/export"

	b.Run("export", func(b *testing.B) {
		before := heapInUse()
		stop := heapPeak()
		var size int64
		for b.Loop() {
			size = streamExport(b, exportPath, s.Owner.Token)
		}
		b.ReportMetric(float64(size)/1e6, "doc-MB")
		b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(before)/(1<<20), "heap-before-MiB")
	})

	doc := s.Do("GET", "/api/v1/workspaces/"+s.Owner.WorkspaceID+"/export", s.Owner.Token, nil)
	testkit.Expect(b, doc, 200)
	b.Run("import", func(b *testing.B) {
		before := heapInUse()
		stop := heapPeak()
		for b.Loop() {
			b.StopTimer()
			ws := s.Do("POST", "/api/v1/workspaces", s.Owner.Token, map[string]any{"name": "Copy"})
			testkit.Expect(b, ws, 201)
			target := ws.Data()["id"].(string)
			tok := s.TokenIn(s.Owner, target)
			b.StartTimer()
			imp := s.Do("POST", "/api/v1/workspaces/"+target+"/import", tok, doc.Body)
			testkit.Expect(b, imp, 201)
			if added := imp.Data()["suppressions"].(map[string]any)["added"]; added != float64(n) {
				b.Fatalf("added %v of %d", added, n)
			}
		}
		b.ReportMetric(float64(len(doc.Body))/1e6, "doc-MB")
		b.ReportMetric(float64(stop())/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(before)/(1<<20), "heap-before-MiB")
	})
}

// streamExport reads an export to its end without keeping it and returns its size.
func streamExport(b *testing.B, url, token string) int64 {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
		b.Fatalf("export: %d %s", res.StatusCode, bytes.TrimSpace(body))
	}
	size, err := io.Copy(io.Discard, res.Body)
	if err != nil {
		b.Fatal(err)
	}
	return size
}
