package server_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// storedAPIKey reads an agent's api_key from its row as stored and unseals it: "" when null.
func (e *env) storedAPIKey(id string) string {
	e.t.Helper()
	var sealed *string
	err := e.DB.View(context.Background(), func(tx service.Tx) error {
		a, err := tx.Agent(id)
		if err == nil && a == nil {
			err = fmt.Errorf("agent %s is not stored", id)
		}
		if err != nil {
			return err
		}
		sealed = a.LLMConfig.APIKey
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if sealed == nil {
		return ""
	}
	plain, err := e.DB.ServiceOptions().Sealer.Open(*sealed)
	if err != nil {
		e.t.Fatalf("unsealing the stored api_key: %v", err)
	}
	return plain
}

func TestAgentAPIKeyNeverInPlaintext(t *testing.T) {
	testkit.NeedBolt(t) // reads the bbolt file's bytes
	j := &keyJourney{e: newEnv(t)}
	j.tok = j.e.Owner.Token
	j.createKeyedAgent(t)
	j.sendMaskBack(t)
	j.replaceAndRestoreKey(t)
	j.clearKey(t)
	// A second agent deleted with its key: the delete event carries it too.
	e, tok := j.e, j.tok
	r := j.keep(e.do("POST", "/api/v1/agents", tok, map[string]any{"name": "Deleted", "llm_config": map[string]any{"api_key": keySecret}}))
	expect(t, j.keep(e.do("DELETE", "/api/v1/agents/"+r.Data()["id"].(string), tok, nil)), 204)

	for _, b := range j.bodies {
		for _, s := range []string{keySecret, keySecret2, "PLAINTEXT-SECRET", "SECOND-SECRET"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("a response holds the plaintext key: %s", b)
			}
		}
	}
	if e.Logs.String() != "" && strings.Contains(e.Logs.String(), "SECRET") {
		t.Errorf("the log holds the key")
	}
	checkNoPlaintextKeyStored(t, e)
}

// The two keys TestAgentAPIKeyNeverInPlaintext sets, ending 9876 and 5432.
const (
	keySecret  = "sk-live-PLAINTEXT-SECRET-a1b2c3d4e5-9876"
	keySecret2 = "sk-live-SECOND-SECRET-zyxwvu-5432"
)

// keyJourney is one agent's api key through create, update, publish, restore and clear,
// keeping every response body to search for the key afterwards.
type keyJourney struct {
	e       *env
	tok, id string
	bodies  [][]byte
}

// keep records r's body and returns r.
func (j *keyJourney) keep(r *response) *response { j.bodies = append(j.bodies, r.Body); return r }

// createKeyedAgent creates and publishes the agent with the first key: shown masked,
// stored sealed; then reads it every way a client can.
func (j *keyJourney) createKeyedAgent(t *testing.T) {
	t.Helper()
	e, tok := j.e, j.tok
	r := j.keep(e.do("POST", "/api/v1/agents", tok, map[string]any{"name": "Keyed", "llm_config": map[string]any{"api_key": keySecret}}))
	expect(t, r, 201)
	j.id = r.Data()["id"].(string)
	if got := path(r.Data(), "llm_config.api_key"); got != "****9876" {
		t.Errorf("created api_key = %v, want ****9876", got)
	}
	if got := e.storedAPIKey(j.id); got != keySecret {
		t.Fatalf("stored key unseals to %q", got)
	}
	e.publish(tok, j.id, nil)
	j.keep(e.do("GET", "/api/v1/agents/"+j.id, tok, nil))
	j.keep(e.do("GET", "/api/v1/agents", tok, nil))
	j.keep(e.do("GET", "/api/v1/agents/"+j.id+"/versions", tok, nil))
	j.keep(e.do("GET", "/api/v1/agents/"+j.id+"/versions/1", tok, nil))
}

// sendMaskBack checks that the masked value sent back keeps the secret and changes
// nothing, and that sending the whole record back (the shape a client reads) is
// accepted too.
func (j *keyJourney) sendMaskBack(t *testing.T) {
	t.Helper()
	e, tok, id := j.e, j.tok, j.id
	shown, _ := e.agent(tok, id)
	r := j.keep(e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"llm_config": shown["llm_config"]}))
	expect(t, r, 200)
	if r.Data()["status"] != "published" || path(r.Data(), "llm_config.api_key") != "****9876" {
		t.Errorf("masked key sent back: status %v, api_key %v", r.Data()["status"], path(r.Data(), "llm_config.api_key"))
	}
	if got := e.storedAPIKey(id); got != keySecret {
		t.Fatalf("after sending the mask back the stored key is %q", got)
	}
	whole := map[string]any{"name": shown["name"]}
	for _, g := range agentGroups {
		whole[g] = shown[g]
	}
	expect(t, j.keep(e.do("PUT", "/api/v1/agents/"+id, tok, whole)), 200)
	if got := e.storedAPIKey(id); got != keySecret {
		t.Fatalf("after sending the record back the stored key is %q", got)
	}
}

// replaceAndRestoreKey checks that a new key changes the mask and the stored secret, the
// versions' diff shows the masks, and restoring version 1, which still holds the first
// key, brings it back.
func (j *keyJourney) replaceAndRestoreKey(t *testing.T) {
	t.Helper()
	e, tok, id := j.e, j.tok, j.id
	r := j.keep(e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"llm_config": map[string]any{"api_key": keySecret2}}))
	expect(t, r, 200)
	if path(r.Data(), "llm_config.api_key") != "****5432" || e.storedAPIKey(id) != keySecret2 {
		t.Errorf("new key: shown %v, stored %q", path(r.Data(), "llm_config.api_key"), e.storedAPIKey(id))
	}
	e.publish(tok, id, nil)
	r = j.keep(e.do("GET", "/api/v1/agents/"+id+"/versions/1/diff/2", tok, nil))
	expect(t, r, 200)
	if want := []any{map[string]any{"path": "llm_config.api_key", "old": "****9876", "new": "****5432"}}; !reflect.DeepEqual(r.List(), want) {
		t.Errorf("diff 1→2 = %v, want %v", r.List(), want)
	}
	r = j.keep(e.do("POST", "/api/v1/agents/"+id+"/versions/1/restore", tok, nil))
	expect(t, r, 200)
	if path(r.Data(), "llm_config.api_key") != "****9876" || e.storedAPIKey(id) != keySecret {
		t.Errorf("restored key: shown %v, stored %q", path(r.Data(), "llm_config.api_key"), e.storedAPIKey(id))
	}
	j.keep(e.do("GET", "/api/v1/agents/"+id+"/versions/2/diff/current", tok, nil))
}

// clearKey checks that null clears the key and that, with no key stored, a mask is
// refused rather than stored as a key.
func (j *keyJourney) clearKey(t *testing.T) {
	t.Helper()
	e, tok, id := j.e, j.tok, j.id
	r := j.keep(e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"llm_config": map[string]any{"api_key": nil}}))
	expect(t, r, 200)
	if v, ok := r.Data()["llm_config"].(map[string]any)["api_key"]; !ok || v != nil {
		t.Errorf("cleared api_key shown as %v (present %v)", v, ok)
	}
	if got := e.storedAPIKey(id); got != "" {
		t.Errorf("cleared key still stored: %q", got)
	}
	expectFields(t, j.keep(e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"llm_config": map[string]any{"api_key": "****9876"}})), "llm_config.api_key")
}

// checkNoPlaintextKeyStored checks that the database file (agents, versions, events)
// holds neither key in plaintext, while it does hold the agents' names, so the scan
// reads real content.
func checkNoPlaintextKeyStored(t *testing.T, e *env) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(e.Dir, "voiceapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) == 0 {
		t.Fatal("empty database file")
	}
	if e.Bolt != nil {
		// Long values are stored deflated: scan them inflated as well.
		err = e.Bolt.Bolt().View(func(tx *bbolt.Tx) error {
			return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
				return b.ForEach(func(k, v []byte) error {
					plain, err := bolt.StoredJSON(v)
					if string(name) == "events" {
						plain, err = bolt.StoredEventJSON(string(k), v) // binary events too
					}
					if err != nil {
						plain = v // not a stored record (a binary value that starts with a mark): as it is
					}
					raw = append(raw, plain...)
					return nil
				})
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{keySecret, keySecret2, "PLAINTEXT-SECRET", "SECOND-SECRET"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the database file holds %q in plaintext", s)
		}
	}
	if !bytes.Contains(raw, []byte("Keyed")) {
		t.Errorf("database file lacks the agent's name: the scan proves nothing")
	}
}

func TestAgentModuleGate(t *testing.T) {
	e := newEnv(t)
	id := e.createAgent(e.Owner.Token, map[string]any{"name": "Gated"})["id"].(string)
	e.publish(e.Owner.Token, id, nil)
	dev := e.newUser("dev@example.com", false)
	devToken := e.addMember(dev, "developer", []string{"knowledge_base", "call_history"}, nil)

	routes := append(agentRoutes(id), [3]any{"GET", "/api/v1/agents", nil}, [3]any{"POST", "/api/v1/agents", map[string]any{"name": "x"}})
	for _, rt := range routes {
		r := e.do(rt[0].(string), rt[1].(string), devToken, rt[2])
		if r.Status != 403 || r.Code() != "forbidden" {
			t.Errorf("developer without agents: %s %s = %d %s, want 403", rt[0], rt[1], r.Status, r.Body)
		}
	}
	// Granting the module opens them.
	expect(t, e.do("PUT", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users/"+dev.ID, e.Owner.Token, map[string]any{"modules": []string{"agents"}}), 200)
	expect(t, e.do("GET", "/api/v1/agents/"+id, devToken, nil), 200)
	expect(t, e.do("PUT", "/api/v1/agents/"+id, devToken, map[string]any{"name": "By dev"}), 200)

	// A member reads but does not write.
	mem := e.newUser("member@example.com", false)
	memToken := e.addMember(mem, "member", nil, nil)
	before, etag := e.agent(e.Owner.Token, id)
	for _, rt := range append(agentRoutes(id), [3]any{"GET", "/api/v1/agents", nil}, [3]any{"POST", "/api/v1/agents", map[string]any{"name": "x"}}) {
		r := e.do(rt[0].(string), rt[1].(string), memToken, rt[2])
		want := 403
		if rt[0] == "GET" {
			want = 200
		}
		if r.Status != want {
			t.Errorf("member: %s %s = %d %s, want %d", rt[0], rt[1], r.Status, r.Body, want)
		}
	}
	if after, etag2 := e.agent(e.Owner.Token, id); !reflect.DeepEqual(before, after) || etag != etag2 {
		t.Errorf("a member's refused writes changed the agent")
	}
}

func TestAgentIDsRestriction(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(e.Owner.Token, map[string]any{"name": "A"})["id"].(string)
	b := e.createAgent(e.Owner.Token, map[string]any{"name": "B"})["id"].(string)
	e.publish(e.Owner.Token, b, nil)
	dev := e.newUser("limited@example.com", false)
	tok := e.addMember(dev, "developer", nil, []string{a})

	if got := itemIDs(e.do("GET", "/api/v1/agents", tok, nil).List()); !slices.Equal(got, []string{a}) {
		t.Errorf("limited list = %v, want [%s]", got, a)
	}
	if got := itemIDs(e.do("GET", "/api/v1/agents?status=published", tok, nil).List()); len(got) != 0 {
		t.Errorf("limited published list = %v, want []", got)
	}
	expect(t, e.do("GET", "/api/v1/agents/"+a, tok, nil), 200)
	beforeB, etagB := e.agent(e.Owner.Token, b)
	for _, rt := range agentRoutes(b) {
		r := e.do(rt[0].(string), rt[1].(string), tok, rt[2])
		if r.Status != 404 {
			t.Errorf("agent outside agent_ids: %s %s = %d %s, want 404", rt[0], rt[1], r.Status, r.Body)
		}
	}
	if after, etag := e.agent(e.Owner.Token, b); !reflect.DeepEqual(beforeB, after) || etag != etagB {
		t.Errorf("agent B changed through a member limited to A")
	}
	r := e.do("POST", "/api/v1/agents", tok, map[string]any{"name": "New"})
	if r.Status != 403 || r.Code() != "forbidden" {
		t.Errorf("limited create = %d %s, want 403", r.Status, r.Body)
	}
	// The agent in the list can be worked on.
	expect(t, e.do("PUT", "/api/v1/agents/"+a, tok, map[string]any{"name": "A2"}), 200)
	e.publish(tok, a, nil)
	expect(t, e.do("GET", "/api/v1/agents/"+a+"/versions/1", tok, nil), 200)
}

func TestAgentIfMatch(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	id := e.createAgent(tok, map[string]any{"name": "Guarded"})["id"].(string)
	_, stale := e.agent(tok, id)
	expect(t, e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"name": "Moved on"}), 200)
	before, etag := e.agent(tok, id)
	if etag == "" || etag == stale {
		t.Fatalf("ETag %q did not change with the record (was %q)", etag, stale)
	}
	for _, rt := range [][3]any{
		{"PUT", "/api/v1/agents/" + id, map[string]any{"name": "Lost update"}},
		{"DELETE", "/api/v1/agents/" + id, nil},
		{"POST", "/api/v1/agents/" + id + "/publish", nil},
	} {
		for _, im := range []string{stale, `"0000"`, `W/` + etag} {
			r := e.do(rt[0].(string), rt[1].(string), tok, rt[2], "If-Match", im)
			if r.Status != 412 || r.Code() != "precondition_failed" {
				t.Errorf("%s with If-Match %s = %d %s, want 412", rt[0], im, r.Status, r.Body)
			}
		}
	}
	if after, etag2 := e.agent(tok, id); !reflect.DeepEqual(before, after) || etag2 != etag {
		t.Fatalf("a refused request changed the agent")
	}
	if vs := e.do("GET", "/api/v1/agents/"+id+"/versions", tok, nil).List(); len(vs) != 0 {
		t.Fatalf("a refused publish made %d versions", len(vs))
	}
	// The current ETag passes, each write moving it on.
	r := e.do("PUT", "/api/v1/agents/"+id, tok, map[string]any{"name": "Guarded 2"}, "If-Match", etag)
	expect(t, r, 200)
	etag = r.Header.Get("ETag")
	if _, shown := e.agent(tok, id); shown != etag {
		t.Errorf("PUT's ETag %s differs from GET's %s", etag, shown)
	}
	expect(t, e.do("POST", "/api/v1/agents/"+id+"/publish", tok, nil, "If-Match", etag), 204)
	expect(t, e.do("DELETE", "/api/v1/agents/"+id, tok, nil, "If-Match", etag), 412) // publish changed it
	_, etag = e.agent(tok, id)
	expect(t, e.do("DELETE", "/api/v1/agents/"+id, tok, nil, "If-Match", etag), 204)
	expect(t, e.do("GET", "/api/v1/agents/"+id, tok, nil), 404)
}

func TestAgentCreateIdempotencyKey(t *testing.T) {
	e := newEnv(t)
	tok := e.Owner.Token
	body := map[string]any{"name": "Once", "llm_config": map[string]any{"api_key": "sk-idempotent-secret-7777"}}
	first := e.do("POST", "/api/v1/agents", tok, body, "Idempotency-Key", "create-once")
	expect(t, first, 201)
	again := e.do("POST", "/api/v1/agents", tok, body, "Idempotency-Key", "create-once")
	expect(t, again, 201)
	if !bytes.Equal(first.Body, again.Body) || first.Header.Get("ETag") != again.Header.Get("ETag") {
		t.Errorf("replay differs:\n%s\n%s", first.Body, again.Body)
	}
	if again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay not marked")
	}
	if bytes.Contains(again.Body, []byte("idempotent-secret")) {
		t.Errorf("replay holds the plaintext key")
	}
	if l := e.do("GET", "/api/v1/agents", tok, nil).List(); len(l) != 1 {
		t.Fatalf("%d agents after a replay, want 1", len(l))
	}
	expectFields(t, e.do("POST", "/api/v1/agents", tok, map[string]any{"name": "Other"}, "Idempotency-Key", "create-once"), "Idempotency-Key")
	// A rejected body is not kept: the key can then be used with a valid one.
	expectFields(t, e.do("POST", "/api/v1/agents", tok, map[string]any{}, "Idempotency-Key", "second"), "name")
	expect(t, e.do("POST", "/api/v1/agents", tok, map[string]any{"name": "Second"}, "Idempotency-Key", "second"), 201)
	if l := e.do("GET", "/api/v1/agents", tok, nil).List(); len(l) != 2 {
		t.Fatalf("%d agents, want 2", len(l))
	}
	// Keys are scoped per token: another token's same key creates its own agent.
	expect(t, e.do("POST", "/api/v1/agents", e.tokenIn(e.Owner, e.Owner.WorkspaceID), body, "Idempotency-Key", "create-once"), 201)
	if l := e.do("GET", "/api/v1/agents", tok, nil).List(); len(l) != 3 {
		t.Fatalf("%d agents, want 3", len(l))
	}
}
