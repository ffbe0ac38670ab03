package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
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

// Agents and versions stored before analysis_config existed (rows of either form, and
// version rows) read with the default group, and encode as a new agent's would.
func TestAgentRowsWithoutAnalysisConfigRead(t *testing.T) {
	db := openInternal(t, &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	a := data.StoredAgent{Agent: *data.DefaultAgent(), LastVersion: 1}
	a.ID, a.WorkspaceID, a.Name, a.Status = "agt_01JD6000000000000000000002", "ws_01JD6000000000000000000000", "Before", data.AgentStatusDraft
	const group = `,"analysis_config":{"fields":[],"success_criterion":null,"summary":false,"auto":false}`
	strip := func(raw []byte) []byte {
		if !bytes.Contains(raw, []byte(group)) {
			t.Fatalf("no analysis_config in %s", raw)
		}
		return bytes.Replace(raw, []byte(group), nil, 1)
	}
	plain, _ := json.Marshal(&a)
	row, err := encodeAgentRow(&a)
	if err != nil {
		t.Fatal(err)
	}
	v := data.AgentVersion{AgentID: a.ID, VersionNumber: 1, Name: a.Name, AgentConfig: a.AgentConfig}
	version, _ := json.Marshal(&v)
	for _, old := range [][]byte{strip(plain), strip(row)} {
		if err := db.bolt.Update(func(tx *bbolt.Tx) error {
			if err := tx.Bucket(bucketAgents).Put([]byte(a.ID), old); err != nil {
				return err
			}
			return tx.Bucket(bucketAgentVersions).Put(versionKey(a.ID, 1), strip(version))
		}); err != nil {
			t.Fatal(err)
		}
		var got *data.StoredAgent
		var gotVersion *data.AgentVersion
		err := db.View(context.Background(), func(st service.Tx) error {
			var err error
			if got, err = st.Agent(a.ID); err != nil {
				return err
			}
			gotVersion, err = st.AgentVersion(a.ID, 1)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if g, _ := json.Marshal(got); !bytes.Equal(g, plain) {
			t.Fatalf("old row read back\n %s\nwant\n %s", g, plain)
		}
		if g, _ := json.Marshal(gotVersion); !bytes.Equal(g, version) {
			t.Fatalf("old version read back\n %s\nwant\n %s", g, version)
		}
	}
}

// An agent row and a version row decode by json.Unmarshal with prompt_config through
// data.PromptConfigRow (data.TestRowsHoldNoAny checks rows of this shape need no
// Decoder), and read back default_variables' numbers as written, deflated or not.
func TestAgentRowsReadNumbersExactly(t *testing.T) {
	for _, row := range []reflect.Type{reflect.TypeFor[agentRowJSON](), reflect.TypeFor[versionRow]()} {
		f, ok := row.FieldByName("PromptConfig")
		if !ok || len(f.Index) != 1 || f.Type != reflect.TypeFor[data.PromptConfigRow]() || f.Tag.Get("json") != "prompt_config" {
			t.Errorf("%v must shadow prompt_config with a data.PromptConfigRow", row)
		}
	}
	db := openInternal(t, &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	a := data.StoredAgent{Agent: *data.DefaultAgent(), LastVersion: 1}
	a.ID, a.WorkspaceID, a.Name, a.Status = "agt_01JD6000000000000000000003", "ws_01JD6000000000000000000000", "Exact", data.AgentStatusDraft
	a.PromptConfig.DefaultVariables = map[string]any{"ref": json.Number("12345678901234567890"), "rate": json.Number("0.10")}
	a.PromptConfig.Prompt = strings.Repeat("Long enough to be deflated. ", 20)
	v := data.AgentVersion{AgentID: a.ID, VersionNumber: 1, Name: a.Name, AgentConfig: a.AgentConfig}
	if err := db.Update(context.Background(), func(st service.Tx) error {
		if err := st.PutAgent(&a, ""); err != nil {
			return err
		}
		return st.PutAgentVersion(&v)
	}); err != nil {
		t.Fatal(err)
	}
	var got *data.StoredAgent
	var gotVersion *data.AgentVersion
	if err := db.View(context.Background(), func(st service.Tx) error {
		var err error
		if got, err = st.Agent(a.ID); err != nil {
			return err
		}
		gotVersion, err = st.AgentVersion(a.ID, 1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for what, c := range map[string]data.AgentConfig{"agent": got.AgentConfig, "version": gotVersion.AgentConfig} {
		if !reflect.DeepEqual(c, a.AgentConfig) {
			t.Errorf("%s read back\n %#v\nwant\n %#v", what, c.PromptConfig, a.PromptConfig)
		}
	}
}

// BenchmarkAgentRowRead: reading an agent's row (testdata/agent.json, 20 tools, with two
// default variables; 8 KB of JSON, stored deflated) as an agent cache miss does.
func BenchmarkAgentRowRead(b *testing.B) {
	raw, err := os.ReadFile("testdata/agent.json")
	if err != nil {
		b.Fatal(err)
	}
	var a data.StoredAgent
	if err := data.DecodeJSON(raw, &a); err != nil {
		b.Fatal(err)
	}
	a.PromptConfig.DefaultVariables = map[string]any{"plan": "gold", "order": json.Number("4417")}
	row, err := encodeAgentRow(&a)
	if err != nil {
		b.Fatal(err)
	}
	db := openInternal(b, &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	if err := db.bolt.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketAgents).Put([]byte(a.ID), encodeValue(row)) }); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	if err := db.bolt.View(func(tx *bbolt.Tx) error {
		for b.Loop() {
			if got, err := getAgentRow(tx.Bucket(bucketAgents), a.ID); err != nil || got == nil {
				b.Fatal(err)
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
}
