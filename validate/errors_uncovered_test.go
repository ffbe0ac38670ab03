package validate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// AddUncovered keeps a rule's fault only where the decoder's faults name neither its
// path nor a path above it.
func TestAddUncoveredKeepsWhatNoFaultCovers(t *testing.T) {
	var decoded Errors
	decoded.Add("llm_config", "must be an object")
	decoded.Add("call_config.max_call_duration_ms", "must be a number")
	var rules Errors
	for _, p := range []string{"llm_config", "llm_config.model", "llm_configs", "llm_config_x.model",
		"call_config.max_call_duration_ms", "call_config.max_call_duration_ms_x", "name"} {
		rules.Add(p, "rule")
	}
	decoded.AddUncovered(&rules)
	want := []string{"llm_config", "call_config.max_call_duration_ms", "llm_configs", "llm_config_x.model",
		"call_config.max_call_duration_ms_x", "name"}
	if !reflect.DeepEqual(decoded.Paths(), want) {
		t.Errorf("paths %v, want %v", decoded.Paths(), want)
	}
	if got := decoded.Messages("llm_config"); len(got) != 1 {
		t.Errorf("llm_config faults %v, want only the decoder's", got)
	}
}

// A body of many unknown fields (a megabyte holds some 75,000) gives as many faults on
// each side: AddUncovered looks each path and its ancestors up, and does not compare
// every fault with every other, which took minutes inside the agent's write transaction
// and held every write of the server. Allocations stand in for the work: the comparison
// built a string for each pair.
func TestAddUncoveredIsLinearInTheFaults(t *testing.T) {
	const n = data.MaxFaults / 2 // both sides kept whole
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("an_unknown_field_with_a_long_name_%d", i)
	}
	allocs := testing.AllocsPerRun(1, func() {
		var decoded, rules Errors
		for i, p := range paths {
			decoded.Add(p, "The field is not a known field.")
			rules.Add(fmt.Sprint("rule.", i), "rule")
		}
		decoded.AddUncovered(&rules)
		if len(decoded.Paths()) != 2*n {
			t.Fatalf("%d faults, want %d", len(decoded.Paths()), 2*n)
		}
	})
	if allocs > 20*n {
		t.Errorf("%.0f allocations for %d faults on each side: the work grows with their product", allocs, n)
	}
}

// BenchmarkAddUncoveredManyFaults: 10,000 faults on each side, as a body of unknown
// fields gives (docs/performance.md, "Hostile bodies").
func BenchmarkAddUncoveredManyFaults(b *testing.B) {
	const n = 10000
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprint("f", i)
	}
	for b.Loop() {
		var decoded, rules Errors
		for _, p := range paths {
			decoded.Add(p, "The field is not a known field.")
			rules.Add(p+".x", "rule")
		}
		decoded.AddUncovered(&rules)
	}
}

// Addf past the bound counts a fault without formatting it, and the merges (Combine,
// CombineUncovered, AddUncovered) carry the count into the total.
func TestAddfPastTheBoundIsCounted(t *testing.T) {
	var rules Errors
	for i := range data.MaxFaults + 3 {
		rules.Addf(Index("rows", i), "The %s field is invalid.", Index("rows", i))
	}
	if rules.Len() != data.MaxFaults || rules.Omitted() != 3 {
		t.Fatalf("%d kept, %d counted; want %d and 3", rules.Len(), rules.Omitted(), data.MaxFaults)
	}
	want := fmt.Sprintf("(and %s more errors)", data.Thousands(data.MaxFaults+2))
	for name, err := range map[string]error{
		"Err":              rules.Err(),
		"Combine":          Combine(rules.Err()),
		"CombineUncovered": CombineUncovered(nil, rules.Err()),
	} {
		e := err.(*data.Error)
		if !strings.HasSuffix(e.Message, want) || len(e.Fields) != data.MaxFaults || e.FieldPaths()[0] != "rows.0" {
			t.Errorf("%s: %q with %d fields, first %s; want it to end %q", name, e.Message, len(e.Fields), e.FieldPaths()[0], want)
		}
	}
}
