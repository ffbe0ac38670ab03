package pagecursor

import (
	"bytes"
	"encoding/base64"
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
			if again, clear := *Encode(fuzzKey, dir, binding, got), *encodeClear(fuzzKey, dir, binding, got); again != cursor && clear != cursor {
				t.Fatalf("Decode accepted %q, which is not what Encode writes for that position (%q), nor its form of before (%q)", cursor, again, clear)
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
// still be read after it, those with the id in clear (before ids were encrypted) too.
func TestEncodeIsStable(t *testing.T) {
	got := *Encode(fuzzKey, Older, "agents_by_ws\x00ws_1", "agt_1")
	if got != stableCursor {
		t.Errorf("Encode = %q, want %q", got, stableCursor)
	}
	for _, c := range []string{stableCursor, stableClearCursor} {
		if dir, id, ok := Decode(fuzzKey, c, "agents_by_ws\x00ws_1"); !ok || dir != Older || id != "agt_1" {
			t.Errorf("Decode(%q) = (%c, %q, %v), want (n, agt_1, true)", c, dir, id, ok)
		}
	}
}

// stableClearCursor is HMAC-SHA256 over "n" "agents_by_ws\x00ws_1" "\x00" "agt_1" under
// fuzzKey, cut to 12 bytes (the MAC), after "n" "agt_1", in unpadded base64url; stableCursor
// has "agt_1" encrypted by AES-256-CTR under HMAC-SHA256(fuzzKey, "pagecursor id
// encryption"), the MAC and four zero bytes its counter block (both computed apart from Go,
// with Python's hmac and openssl enc -aes-256-ctr).
const (
	stableClearCursor = "bmFndF8xCJAylHdCf7VwQChw"
	stableCursor      = "boSqvzIXCJAylHdCf7VwQChw"
)

// TestCursorNamesNoID: a cursor does not hold its id, nor any run of it, in clear, so a
// page a scan bound ends on a record the caller may not see (another agent's) does not
// name that record; and the same id in two lists is written differently.
func TestCursorNamesNoID(t *testing.T) {
	const id = "agt_01JD6000000000000000000000"
	seen := map[string]bool{}
	for _, binding := range []string{"agents_by_ws\x00ws_1", "agents_by_ws\x00ws_2"} {
		for _, dir := range []byte{Older, Newer} {
			c := *Encode(fuzzKey, dir, binding, id)
			raw, err := base64.RawURLEncoding.DecodeString(c)
			if err != nil {
				t.Fatal(err)
			}
			body := raw[1 : len(raw)-macLen]
			if bytes.Contains(raw, []byte("agt_01JD6")) || bytes.Contains(raw, []byte("0000000000")) {
				t.Errorf("cursor %q holds its id in clear: %q", c, raw)
			}
			if seen[string(body)] {
				t.Errorf("cursor %q encrypts its id as another list's or direction's does", c)
			}
			seen[string(body)] = true
		}
	}
}

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
