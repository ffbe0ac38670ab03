package bolt

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// A database written before rows were deflated and agent rows carried their key beside
// the response encoding reads back the same: rows of the old form (plain JSON, the sealed
// key in llm_config.api_key) decode as before, and so do values never deflated.
func TestAgentRowsOfTheOldFormRead(t *testing.T) {
	db := openInternal(t, &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	sealed := "sealed:old"
	old := data.StoredAgent{Agent: *data.DefaultAgent(), LastVersion: 3}
	old.ID, old.WorkspaceID, old.Name, old.Status = "agt_01JD6000000000000000000001", "ws_01JD6000000000000000000000", "Old", data.AgentStatusDraft
	old.LLMConfig.APIKey = &sealed
	old.LLMConfig.Tools = []*data.Tool{{Name: "end", Type: "end_call"}}
	raw, err := json.Marshal(&old) // the old row: plain JSON, sealed key inside
	if err != nil {
		t.Fatal(err)
	}
	if err := db.bolt.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketAgents).Put([]byte(old.ID), raw) }); err != nil {
		t.Fatal(err)
	}
	var got *data.StoredAgent
	if err := db.bolt.View(func(tx *bbolt.Tx) error {
		var err error
		got, err = getAgentRow(tx.Bucket(bucketAgents), old.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got)
	if !bytes.Equal(g, raw) || got.LLMConfig.APIKey == nil || *got.LLMConfig.APIKey != sealed {
		t.Fatalf("old row read back\n %s\nwant\n %s", g, raw)
	}
}

// Long values are stored deflated behind the mark, short ones and ones that do not shrink
// as given; both decode to the JSON put.
func TestStoredValuesDeflate(t *testing.T) {
	long := []byte(`{"tools":[` + strings.Repeat(`{"name":"end","type":"end_call","description":null},`, 40) + `null]}`)
	for _, raw := range [][]byte{[]byte(`{"a":1}`), long} {
		stored := encodeValue(raw)
		if deflated := stored[0] == markDeflateDict1; deflated != (len(raw) >= compressMin) {
			t.Errorf("%d bytes stored deflated: %v", len(raw), deflated)
		}
		if len(raw) >= compressMin && len(stored)*4 > len(raw) {
			t.Errorf("%d bytes deflated to %d", len(raw), len(stored))
		}
		back, err := decodeValue(stored)
		if err != nil || !bytes.Equal(back, raw) {
			t.Errorf("decoded %q, %v", back, err)
		}
	}
	if _, err := decodeValue([]byte{markDeflate, 0xff, 0x00}); err == nil {
		t.Error("a corrupt deflated value decoded")
	}
}
