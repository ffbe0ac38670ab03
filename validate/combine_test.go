package validate

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// CombineUncovered joins a body's reference faults to its own, leaving out those at or
// under a path the body's own faults name, and lets any other error through first.
func TestCombineUncovered(t *testing.T) {
	own := func(paths ...string) error {
		var e Errors
		for _, p := range paths {
			e.Add(p, "own "+p)
		}
		return e.Err()
	}
	for _, c := range []struct {
		name         string
		first, later error
		paths        []string
	}{
		{"both empty", nil, nil, nil},
		{"references alone", nil, own("agent_id"), []string{"agent_id"}},
		{"side by side", own("name"), own("agent_ids.0"), []string{"name", "agent_ids.0"}},
		{"the same path keeps the first", own("agent_ids.1"), own("agent_ids.0", "agent_ids.1"), []string{"agent_ids.0", "agent_ids.1"}},
		{"a list refused whole", own("variants"), own("variants.10.version", "variants.2.version"), []string{"variants"}},
		{"a prefix that is no parent", own("agent"), own("agent_ids.0"), []string{"agent", "agent_ids.0"}},
		{"the first's nested faults are kept", own("zz", "zz.k"), own("zz.j", "id"), []string{"zz", "zz.k", "id"}},
	} {
		expectPaths(t, c.name, CombineUncovered(c.first, c.later), c.paths...)
	}
	if got := CombineUncovered(own("name"), data.NotFound("Agent")); data.ErrorCode(got) != data.ENOTFOUND {
		t.Errorf("a not found after faults: %v, want it through", got)
	}
	if got := CombineUncovered(own("name"), own("variants.0.version")); got.(*data.Error).Fields["name"][0] != "own name" {
		t.Errorf("the first faults' messages changed: %v", got)
	}
}
