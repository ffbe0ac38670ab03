package bolt

import (
	"bytes"
	"compress/flate"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// TestEventWorkspaceStoredForms: the workspace of an event reads from every form a
// stored event can have: plain JSON, deflated without and with the dictionary, with its
// members in another order (the payload first: read through, not guessed), and a
// reference to a call or to an earlier event (its envelope holds the workspace).
func TestEventWorkspaceStoredForms(t *testing.T) {
	db := openInternal(t, &clock{})
	inOrder := []byte(`{"id":"evt_1","type":"agent.updated","created_at":"2026-01-01T00:00:00Z","workspace_id":"ws_a","actor":{"type":"user"},"data":{"workspace_id":"ws_payload","n":[1,2,{"x":"}"}]},"prev_hash":"","hash":"h"}`)
	dataFirst := []byte(`{"data":{"workspace_id":"ws_payload","s":"\"workspace_id\":\"ws_wrong\""},"id":"evt_2","workspace_id":"ws_b"}`)
	var oldDeflate bytes.Buffer
	oldDeflate.WriteByte(markDeflate)
	w, _ := flate.NewWriter(&oldDeflate, flate.BestSpeed)
	w.Write(inOrder)
	w.Close()
	withDict := append([]byte{markDeflateDict1}, deflateWithDict(t, inOrder)...)
	cases := []struct {
		name   string
		stored []byte
		want   string
	}{
		{"plain", inOrder, "ws_a"},
		{"payload first", dataFirst, "ws_b"},
		{"deflated without a dictionary", oldDeflate.Bytes(), "ws_a"},
		{"deflated with the dictionary", withDict, "ws_a"},
		{"no workspace", []byte(`{"id":"evt_3","data":null}`), ""},
		{"a call reference", encodeRef(markCallRef, "call_x", &data.Event{ID: "evt_4", Type: "call.ended", WorkspaceID: "ws_c"}), "ws_c"},
		{"an event reference", encodeRef(markEventRef, "evt_1", &data.Event{ID: "evt_5", Type: "call.started", WorkspaceID: "ws_d"}), "ws_d"},
	}
	err := db.bolt.Update(func(b *bbolt.Tx) error {
		for _, c := range cases {
			if err := b.Bucket(bucketEvents).Put([]byte(c.name), c.stored); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.bolt.View(func(b *bbolt.Tx) error {
		for _, c := range cases {
			if got, err := (tx{db: db, b: b}).EventWorkspace(c.name); err != nil || got != c.want {
				t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
			}
		}
		if _, err := (tx{db: db, b: b}).EventWorkspace("broken"); err != nil {
			t.Errorf("an absent event: %v", err)
		}
		return nil
	})
}

func deflateWithDict(t *testing.T, raw []byte) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriterDict(&buf, deflateLevel, deflateDictV1)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(raw)
	w.Close()
	return buf.Bytes()
}

// TestTopLevelString: the member is found at the top level only, past values of every
// kind, and every prefix of the object either finds it or asks for more, never a wrong
// value.
func TestTopLevelString(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{`{"workspace_id":"ws_1"}`, "ws_1"},
		{` { "id" : "a\"b" , "n" : -1.5e3 , "t" : true , "z" : null , "workspace_id" : "ws_\u0031" } `, "ws_1"},
		{`{"actor":{"workspace_id":"ws_inner","a":[1,{"b":"]}"}]},"workspace_id":"ws_outer"}`, "ws_outer"},
		{`{"s":"\\","workspace_id":"ws_2"}`, "ws_2"},
		{`{"list":[],"obj":{},"workspace_id":""}`, ""},
		{`{"id":"x"}`, ""},
	} {
		got, ok, err := topLevelString([]byte(c.in), "workspace_id", true)
		if err != nil || !ok || got != c.want {
			t.Errorf("%s: %q, %v, %v; want %q", c.in, got, ok, err, c.want)
		}
		for n := range len(c.in) {
			got, ok, err := topLevelString([]byte(c.in[:n]), "workspace_id", false)
			if err != nil || ok && got != c.want {
				t.Errorf("prefix %q of %s: %q, %v, %v", c.in[:n], c.in, got, ok, err)
			}
		}
	}
	if _, _, err := topLevelString([]byte(`["workspace_id"]`), "workspace_id", true); err == nil {
		t.Error("an array read as an event")
	}
}
