package main

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/internal/fakeagents"
)

// TestPocketBaseBody: the record carries the agent body's name as its own field and the
// rest, unchanged, as its JSON field, so both systems store the same bytes.
func TestPocketBaseBody(t *testing.T) {
	agent := fakeagents.Body("Agent 1", 10)
	rec := pbBody("Agent 1", 10)
	if rec["name"] != "Agent 1" || len(rec) != 2 {
		t.Fatalf("record fields: %v", rec)
	}
	cfg := rec["config"].(map[string]any)
	if _, ok := cfg["name"]; ok {
		t.Error("the name is also in the JSON field")
	}
	delete(agent, "name")
	a, _ := json.Marshal(agent)
	c, _ := json.Marshal(cfg)
	if string(a) != string(c) {
		t.Errorf("config differs from the agent body:\n%s\n%s", a, c)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		rps  []float64
		want float64
	}{{[]float64{5}, 5}, {[]float64{9, 1, 5}, 5}, {[]float64{3, 1, 2, 4}, 3}} {
		var rs []result
		for _, r := range tc.rps {
			rs = append(rs, result{RPS: r})
		}
		if got := median(rs).RPS; got != tc.want {
			t.Errorf("median of %v: %v, want %v", tc.rps, got, tc.want)
		}
		if rs[0].RPS != tc.rps[0] {
			t.Errorf("median reordered its input")
		}
	}
}
