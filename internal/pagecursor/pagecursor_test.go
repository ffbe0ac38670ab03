package pagecursor

import (
	"bytes"
	"testing"
)

// fuzzKey is a fixed key, so that cursors in the seed corpus stay valid from run to run.
var fuzzKey = bytes.Repeat([]byte{0x5a}, 32)

// FuzzDecode: Decode never panics on any string, accepts only the exact strings Encode
// produced for that list, and every cursor Encode writes decodes back to the same
// position, for its own list only.
func FuzzDecode(f *testing.F) {
	binding := "agents_by_ws\x00ws_01JD6000000000000000000000"
	foreign := "agents_by_ws\x00ws_01JD6000000000000000000001"
	for _, id := range []string{"agt_01JD6000000000000000000000", "call_01JD6ZZZZZZZZZZZZZZZZZZZZZ", ""} {
		f.Add(*Encode(fuzzKey, Older, binding, id), id)
		f.Add(*Encode(fuzzKey, Newer, binding, id), id)
	}
	f.Fuzz(func(t *testing.T, cursor, id string) {
		if _, _, ok := Decode(fuzzKey, cursor, binding); ok && !WellFormed(cursor) {
			t.Fatalf("Decode accepted %q, which WellFormed refuses", cursor)
		}
		if dir, got, ok := Decode(fuzzKey, cursor, binding); ok {
			if again := *Encode(fuzzKey, dir, binding, got); again != cursor {
				t.Fatalf("Decode accepted %q, which is not what Encode writes for that position (%q)", cursor, again)
			}
			if _, _, ok := Decode(fuzzKey, cursor, foreign); ok {
				t.Fatalf("cursor %q decodes for another list too", cursor)
			}
		}
		for _, dir := range []byte{Older, Newer} {
			c := *Encode(fuzzKey, dir, binding, id)
			d, got, ok := Decode(fuzzKey, c, binding)
			if dir == Older && id == "" {
				// "Older than nothing" is never produced: the first page has no cursor.
				if ok {
					t.Fatalf("a next-page cursor with an empty id decodes")
				}
				continue
			}
			if !ok || d != dir || got != id || !WellFormed(c) {
				t.Fatalf("cursor %q for (%c, %q) decodes as (%c, %q, %v)", c, dir, id, d, got, ok)
			}
			if _, _, ok := Decode(fuzzKey, c, foreign); ok {
				t.Fatalf("cursor %q decodes for another list", c)
			}
			if _, _, ok := Decode(bytes.Repeat([]byte{0xa5}, 32), c, binding); ok {
				t.Fatalf("cursor %q decodes under another key", c)
			}
		}
	})
}

// TestEncodeIsStable pins the cursor format: cursors handed out before an upgrade must
// still be read after it.
func TestEncodeIsStable(t *testing.T) {
	got := *Encode(fuzzKey, Older, "agents_by_ws\x00ws_1", "agt_1")
	if got != stableCursor {
		t.Errorf("Encode = %q, want %q", got, stableCursor)
	}
}

// stableCursor is HMAC-SHA256 over "n" "agents_by_ws\x00ws_1" "\x00" "agt_1" under fuzzKey,
// cut to 12 bytes, after "n" "agt_1", in unpadded base64url (computed apart from Go).
const stableCursor = "bmFndF8xCJAylHdCf7VwQChw"

// TestBindAgentsKeepsEveryAgentsBinding: a caller who sees every agent binds a campaign or
// call list as before its agents were bound (its cursors of before, and an analysis
// backfill's checkpoint, read on), and any limit, even to no agent, binds another list.
func TestBindAgentsKeepsEveryAgentsBinding(t *testing.T) {
	const list = "calls\x00ws_1\x00\x00\x00\x00\x000\x000"
	if got := BindAgents(list, nil); got != list {
		t.Errorf("every agent: %q; want the binding of before, %q", got, list)
	}
	seen := map[string]bool{list: true}
	for _, agents := range [][]string{{}, {"agt_a"}, {"agt_a", "agt_b"}, {"agt_b"}} {
		got := BindAgents(list, agents)
		if seen[got] {
			t.Errorf("agents %q bind %q, as another set does", agents, got)
		}
		seen[got] = true
	}
}
