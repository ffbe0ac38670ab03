package bolt

import (
	"bytes"
	"compress/flate"
	"os"
	"testing"
)

// BenchmarkEncodeValue: what storing a call costs in deflate, against the dictionary
// (the format written) and without it at the fastest level (the format before).
func BenchmarkEncodeValue(b *testing.B) {
	call, err := os.ReadFile("testdata/call.json")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("dict-level2", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encodeValue(call)
		}
	})
	b.Run("nodict-level1", func(b *testing.B) {
		b.ReportAllocs()
		w, _ := flate.NewWriter(nil, flate.BestSpeed)
		for b.Loop() {
			var buf bytes.Buffer
			w.Reset(&buf)
			w.Write(call)
			w.Close()
		}
	})
}
