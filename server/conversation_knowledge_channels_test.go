package server_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// TestRetrievedKnowledgeShowsNoMoreThanTheConversation: the chunks an agent item retrieved
// are part of the conversation (conventions §21), gated by the agents module as the
// conversation is, so a member without the knowledge_base module, who may neither read
// the knowledge base nor query the agent's knowledge, reads them on its items: exactly
// knowledge_base_id, source_id, text and score, no source's title. No other channel
// shows more: the call the conversation becomes keeps role, content and start_ms per
// transcript item (GET /calls/{id}, the NDJSON export, call.ended's data as the audit log
// and webhooks carry it), none of the knowledge.
func TestRetrievedKnowledgeShowsNoMoreThanTheConversation(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(shopModel)
	agent := shopAgent(t, e)
	kbID := e.Do("GET", "/api/v1/agents/"+agent, e.tok, nil).Data()["llm_config"].(map[string]any)["knowledge_base_ids"].([]any)[0].(string)
	dev := e.Member("dev@example.com", e.Owner.WorkspaceID, data.RoleDeveloper, []string{data.ModuleAgents, data.ModuleCallHistory}, nil)
	testkit.Expect(t, e.Do("GET", "/api/v1/knowledge-bases/"+kbID, dev.Token, nil), 403)
	testkit.Expect(t, e.Do("POST", "/api/v1/agents/"+agent+"/knowledge/query", dev.Token, map[string]any{"query": "pro plan"}), 403)

	r := e.Do("POST", "/api/v1/agents/"+agent+"/conversations", dev.Token, map[string]any{"version": "draft", "variables": map[string]any{"shop": "Acme"}})
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	turn := e.Do("POST", "/api/v1/conversations/"+id+"/messages", dev.Token, map[string]any{"content": "How much does a plan cost a month?"})
	testkit.Expect(t, turn, 200)
	var shown int
	for _, it := range turn.Data()["items"].([]any) {
		for _, k := range asSlice(it.(map[string]any)["knowledge"]) {
			chunk := k.(map[string]any)
			keys := make([]string, 0, len(chunk))
			for key := range chunk {
				keys = append(keys, key)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, []string{"knowledge_base_id", "score", "source_id", "text"}) || chunk["knowledge_base_id"] != kbID {
				t.Errorf("a retrieved chunk shows %v: %v", keys, chunk)
			}
			shown++
		}
	}
	if shown == 0 {
		t.Fatalf("the member reads no retrieved knowledge on the turn: %s", turn.Body)
	}
	if got := e.Do("GET", "/api/v1/conversations/"+id, dev.Token, nil); !strings.Contains(string(got.Body), `"knowledge_base_id"`) {
		t.Errorf("the stored conversation shows the member no knowledge: %s", got.Body)
	}

	end := e.Do("POST", "/api/v1/conversations/"+id+"/end", dev.Token, nil)
	testkit.Expect(t, end, 200)
	callID := end.Data()["id"].(string)
	checkTranscript := func(channel string, call map[string]any) {
		t.Helper()
		items := asSlice(call["transcript"])
		if len(items) == 0 {
			t.Errorf("%s: no transcript: %v", channel, call)
		}
		for _, it := range items {
			m := it.(map[string]any)
			if len(m) != 3 || m["role"] == nil || m["content"] == nil || m["start_ms"] == nil {
				t.Errorf("%s: a transcript item shows %v", channel, m)
			}
		}
		raw, _ := json.Marshal(call)
		for _, more := range []string{"knowledge_base_id", "source_id", `"Plans"`} {
			if strings.Contains(string(raw), more) {
				t.Errorf("%s shows %s of the retrieved knowledge: %s", channel, more, raw)
			}
		}
	}
	checkTranscript("the end's call", end.Data())
	checkTranscript("GET /calls/{id}", e.Do("GET", "/api/v1/calls/"+callID, dev.Token, nil).Data())
	exported := e.Do("GET", "/api/v1/calls/export?format=ndjson", dev.Token, nil)
	testkit.Expect(t, exported, 200)
	for _, line := range strings.Split(strings.TrimSpace(string(exported.Body)), "\n") {
		var call map[string]any
		if err := json.Unmarshal([]byte(line), &call); err != nil {
			t.Fatalf("export line %q: %v", line, err)
		}
		if call["id"] == callID {
			checkTranscript("the NDJSON export", call)
		}
	}
	events := e.Do("GET", "/api/v1/audit-log?type=call.ended", e.tok, nil).List()
	if len(events) != 1 {
		t.Fatalf("call.ended events: %v", events)
	}
	checkTranscript("call.ended's data", events[0].(map[string]any)["data"].(map[string]any))
}

// asSlice is v as a JSON array, nil when it is not one.
func asSlice(v any) []any { s, _ := v.([]any); return s }
