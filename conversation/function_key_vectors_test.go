package conversation

import (
	"encoding/json"
	"os"
	"testing"
)

// TestFunctionKeyVectors holds functionKey to the vectors in testdata/function_keys.json,
// which the LiveKit example's tests hold its own key to (examples/livekit/test): a
// function server sees one kind of key from either runtime, so neither may drift.
func TestFunctionKeyVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/function_keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		Scope, Message, Name, Key string
		Position, Ordinal         int
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) < 8 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	seen := map[string]bool{}
	for _, v := range vectors {
		got := functionKey(v.Scope, v.Position, v.Message, v.Name, v.Ordinal)
		if got != v.Key {
			t.Errorf("functionKey(%q, %d, %q, %q, %d) = %s, want %s", v.Scope, v.Position, v.Message, v.Name, v.Ordinal, got, v.Key)
		}
		if !keyShape.MatchString(got) || seen[got] {
			t.Errorf("%s: not of the documented shape, or another vector's", got)
		}
		seen[got] = true
	}
}
