package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTargetDefaults: the sizes, unless the flag was given (even at the other
// modes' default value).
func TestTargetDefaults(t *testing.T) {
	o := options{updates: 0, calls: 2000}
	targetDefaults(&o, map[string]bool{})
	if o.updates != 58_000 || o.calls != 1_000_000 {
		t.Errorf("unset: %d updates, %d calls", o.updates, o.calls)
	}
	o = options{updates: 0, calls: 2000}
	targetDefaults(&o, map[string]bool{"updates": true, "calls": true})
	if o.updates != 0 || o.calls != 2000 {
		t.Errorf("set: %d updates, %d calls", o.updates, o.calls)
	}
}

func TestMedians(t *testing.T) {
	med, failed := medians([][]result{{{RPS: 3}, {RPS: 1, Errors: 2}, {RPS: 2, Non2xx: 1}}, {{RPS: 7}}})
	if med[0].RPS != 2 || med[1].RPS != 7 || failed[0] != 3 || failed[1] != 0 {
		t.Errorf("medians %+v, failed %v", med, failed)
	}
}

// TestSeededCallsReuse: a directory the harness seeded with -calls calls is reused and
// said to be; one with other calls, or a database without the harness's state, is
// refused rather than seeded again or measured as if it held what was asked.
func TestSeededCallsReuse(t *testing.T) {
	dir := t.TempDir()
	st := &state{Token: "1|x", Agents: []string{"agt_1"}, Calls: 300}
	if err := st.save(dir); err != nil {
		t.Fatal(err)
	}
	_, got, seeding, err := seededCalls(options{dataDir: dir, calls: 300}, t.TempDir())
	if err != nil || got.Calls != 300 || !strings.Contains(seeding, "reused") || !strings.Contains(seeding, "seeding skipped") {
		t.Errorf("reuse: %v, %q, %v", got, seeding, err)
	}
	if _, _, _, err := seededCalls(options{dataDir: dir, calls: 400}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "give -calls 300") {
		t.Errorf("other calls: %v", err)
	}
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "voiceapi.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := seededCalls(options{dataDir: foreign, calls: 300}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "did not seed") {
		t.Errorf("a database without state: %v", err)
	}
}
