package bolt_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// The encoded agents reads serve from the cache are the bytes json.Marshal gives for the
// records Agent and ListAgents return, before and after a change, and never another
// workspace's.
func TestAgentJSONMatchesTheRecord(t *testing.T) {
	db := openTestDB(t)
	u := mustUser(t, db, "cache@example.com")
	ctx := asUser(t, db, u)
	a := mustAgent(t, ctx, db, "Cached")
	mustAgent(t, ctx, db, "Other")
	same := func(step string) {
		t.Helper()
		rec, err := db.Agent(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(rec)
		for range 2 { // a miss, then a hit
			got, err := db.AgentJSON(ctx, a.ID)
			if err != nil || string(got) != string(want) {
				t.Fatalf("%s: AgentJSON %s (%v), want %s", step, got, err, want)
			}
		}
		list, _, err := db.ListAgents(ctx, data.AgentFilter{})
		if err != nil {
			t.Fatal(err)
		}
		raws, _, err := db.ListAgentsJSON(ctx, data.AgentFilter{})
		if err != nil || len(raws) != len(list) || len(list) != 2 {
			t.Fatalf("%s: %d encoded, %d records (%v)", step, len(raws), len(list), err)
		}
		for i := range list {
			if w, _ := json.Marshal(list[i]); string(raws[i]) != string(w) {
				t.Fatalf("%s: item %d is %s, want %s", step, i, raws[i], w)
			}
		}
	}
	same("created")
	key := `{"api_key":"gsk_cache_secret_42"}`
	if _, err := db.UpdateAgent(ctx, a.ID, map[string]json.RawMessage{"name": json.RawMessage(`"Renamed"`), "llm_config": json.RawMessage(key)}); err != nil {
		t.Fatal(err)
	}
	same("updated")
	if got, _ := db.AgentJSON(ctx, a.ID); !json.Valid(got) || !contains(got, `"Renamed"`) || contains(got, "gsk_cache_secret_42") {
		t.Fatalf("after the update: %s", got)
	}
	stranger := asUser(t, db, mustUser(t, db, "stranger@example.com"))
	if _, err := db.AgentJSON(stranger, a.ID); data.ErrorCode(err) != data.ENOTFOUND {
		t.Fatalf("another workspace reads the cached agent: %v", err)
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
