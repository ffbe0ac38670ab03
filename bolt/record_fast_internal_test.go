package bolt

import (
	"bytes"
	"compress/flate"
	"io"
	"os"
	"testing"
)

// TestLargeValuesDeflateFast: a value past fastDeflateMin (an agent with ten tools,
// testdata/agent.json, as the API returns it) is written by the fast encoder, reads back
// through decodeValue and the standard library's inflater with the dictionary, and
// still shrinks to under a seventh of its JSON.
func TestLargeValuesDeflateFast(t *testing.T) {
	agent, err := os.ReadFile("testdata/agent.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(agent) < fastDeflateMin {
		t.Fatalf("testdata/agent.json is %d bytes, under fastDeflateMin", len(agent))
	}
	stored := encodeValue(agent)
	var fast bytes.Buffer
	if err := deflateFast(&fast, agent); err != nil {
		t.Fatal(err)
	}
	if stored[0] != markDeflateDict1 || !bytes.Equal(stored[1:], fast.Bytes()) {
		t.Fatalf("encodeValue did not take the fast encoder for %d bytes", len(agent))
	}
	back, err := decodeValue(stored)
	if err != nil || !bytes.Equal(back, agent) {
		t.Fatalf("read back %d bytes, %v", len(back), err)
	}
	std, err := io.ReadAll(flate.NewReaderDict(bytes.NewReader(stored[1:]), deflateDictV1))
	if err != nil || !bytes.Equal(std, agent) {
		t.Fatalf("the standard inflater read %d bytes, %v", len(std), err)
	}
	if len(stored)*7 > len(agent) {
		t.Errorf("stored %d bytes for %d of JSON", len(stored), len(agent))
	}
	for i := range 3 { // pooled writers keep the dictionary across Resets
		if again := encodeValue(agent); !bytes.Equal(again, stored) {
			t.Fatalf("encoding %d differs from the first", i+2)
		}
	}
}

// BenchmarkEncodeAgentValue: deflating an agent's row (8 KB of JSON) as written (the fast
// encoder) and with the standard encoder at level 2, against the dictionary.
func BenchmarkEncodeAgentValue(b *testing.B) {
	agent, err := os.ReadFile("testdata/agent.json")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fast-level3", func(b *testing.B) {
		var n int
		for b.Loop() {
			n = len(encodeValue(agent))
		}
		b.ReportMetric(float64(n), "stored-bytes")
	})
	b.Run("std-level2", func(b *testing.B) {
		w, _ := flate.NewWriterDict(nil, deflateLevel, deflateDictV1)
		var n int
		for b.Loop() {
			var buf bytes.Buffer
			w.Reset(&buf)
			w.Write(agent)
			w.Close()
			n = 1 + buf.Len()
		}
		b.ReportMetric(float64(n), "stored-bytes")
	})
}
