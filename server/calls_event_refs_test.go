package server_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"go.etcd.io/bbolt"
)

// callEventPayloads returns the raw payload bytes of the audit log's events about call id,
// by event type, as the API serves them.
func callEventPayloads(t *testing.T, c *callEnv, id string) map[string]json.RawMessage {
	t.Helper()
	r := c.do("GET", "/api/v1/audit-log?per_page=100", c.Owner.Token, nil)
	expect(t, r, 200)
	var page struct {
		Data []struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &page); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for _, e := range page.Data {
		var ref struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(e.Data, &ref) == nil && ref.ID == id {
			if _, dup := out[e.Type]; dup {
				t.Fatalf("two %s events of %s", e.Type, id)
			}
			out[e.Type] = append(json.RawMessage(nil), e.Data...)
		}
	}
	return out
}

// A call registered finished records call.registered and call.ended with the same payload,
// the call as stored; bbolt keeps both as references to the stored call. Both read back as
// the call as registered, byte for byte alike, and stay so after the call is changed (the
// change writes them whole first) and deleted.
func TestCallEventsReferenceSameBytes(t *testing.T) {
	c := newCallEnv(t)
	r := c.do("POST", "/api/v1/calls", c.Owner.Token, map[string]any{"agent_id": c.agentA, "direction": "web",
		"status": "ended", "started_at": "2026-11-20T10:00:00Z", "ended_at": "2026-11-20T10:03:00Z",
		"transcript": said("Hello, thanks for calling.", "I would like to move my appointment to Friday.", "Done. Anything else?")})
	expect(t, r, 201)
	var created struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &created); err != nil {
		t.Fatal(err)
	}
	id := str(r.Data(), "id")
	before := callEventPayloads(t, c, id)
	reg, ended := before["call.registered"], before["call.ended"]
	if len(reg) == 0 || !bytes.Equal(reg, ended) {
		t.Fatalf("payloads differ:\n%s\n%s", reg, ended)
	}
	var a, b any
	if json.Unmarshal(reg, &a) != nil || json.Unmarshal(created.Data, &b) != nil || !jsonEqual(a, b) {
		t.Fatalf("the events' payload is not the call as registered:\n%s\n%s", reg, created.Data)
	}
	if refs := storedEventRefs(t, c, 2); refs != 2 {
		t.Errorf("%d events stored as references, want 2", refs)
	}
	r = c.do("PUT", "/api/v1/calls/"+id, c.Owner.Token, map[string]any{"metadata": map[string]any{"crm": "changed"},
		"transcript": said("Something else entirely.")})
	expect(t, r, 200)
	if r.Data()["metadata"].(map[string]any)["crm"] != "changed" {
		t.Fatalf("the call was not changed: %s", r.Body)
	}
	if refs := storedEventRefs(t, c, 0); refs != 0 {
		t.Errorf("%d events still reference the changed call", refs)
	}
	expect(t, c.do("DELETE", "/api/v1/calls/"+id, c.Owner.Token, nil), 204)
	after := callEventPayloads(t, c, id)
	for _, typ := range []string{"call.registered", "call.ended"} {
		if !bytes.Equal(after[typ], before[typ]) {
			t.Errorf("%s changed after the call was updated and deleted:\n%s\n%s", typ, before[typ], after[typ])
		}
	}
	// Deleted while its events still reference it: they are written whole first.
	second := c.register(t, map[string]any{"status": "ended", "transcript": said("A second call, deleted at once, with enough words.")})
	id2 := str(second, "id")
	before2 := callEventPayloads(t, c, id2)
	if storedEventRefs(t, c, 2) != 2 {
		t.Error("the second call's events are not references")
	}
	expect(t, c.do("DELETE", "/api/v1/calls/"+id2, c.Owner.Token, nil), 204)
	after2 := callEventPayloads(t, c, id2)
	if len(before2["call.ended"]) == 0 || !bytes.Equal(before2["call.ended"], after2["call.ended"]) || !bytes.Equal(before2["call.registered"], after2["call.registered"]) {
		t.Errorf("events of a deleted call changed:\n%v\n%v", before2, after2)
	}
	r = c.do("GET", "/api/v1/audit-log/verify", c.Owner.Token, nil)
	expect(t, r, 200)
	if r.Data()["intact"] != true {
		t.Errorf("the chain over referencing events: %s", r.Body)
	}
}

// storedEventRefs counts the call events bbolt stores as references to their call (first
// byte 0x04, bolt's markCallRef, or 0x07, its binary form markCallRefBinary); on another
// engine, which has none, what the test wants.
func storedEventRefs(t *testing.T, c *callEnv, want int) int {
	if c.Bolt == nil {
		return want
	}
	n := 0
	err := c.Bolt.Bolt().View(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("events")).ForEach(func(_, v []byte) error {
			if len(v) > 0 && (v[0] == 0x04 || v[0] == 0x07) {
				n++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
