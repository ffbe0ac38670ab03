package server_test

import (
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

var testIDs = data.NewIDGen()

// newAgent stores a minimal agent row in workspace ws (agents have their own issue; the
// number and call rules only read workspace_id and published_version).
func (e *env) newAgent(ws string, published *int) string {
	e.t.Helper()
	id := testIDs.New(data.PrefixAgent)
	row, _ := json.Marshal(map[string]any{"id": id, "workspace_id": ws, "name": "agent", "status": "draft", "published_version": published})
	err := e.bolt().Bolt().Update(func(tx *bbolt.Tx) error { return tx.Bucket([]byte("agents")).Put([]byte(id), row) })
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// eventTypes lists the types of ws's events, oldest first.
func (e *env) eventTypes(ws string) []string {
	e.t.Helper()
	var types []string
	err := e.bolt().Bolt().View(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("events")).ForEach(func(k, v []byte) error {
			var ev data.Event
			if err := json.Unmarshal(v, &ev); err != nil {
				return err
			}
			if ev.WorkspaceID == ws {
				types = append(types, ev.Type)
			}
			return nil
		})
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return types
}

// countTypes counts events of type typ in ws.
func (e *env) countEvents(ws, typ string) int {
	n := 0
	for _, t := range e.eventTypes(ws) {
		if t == typ {
			n++
		}
	}
	return n
}

// member adds a fresh user to ws with the given role, modules and agent_ids, and returns
// a token bound to ws.
func (e *env) member(ws, email, role string, modules []string, agentIDs []string) string {
	e.t.Helper()
	u := e.newUser(email, false)
	body := map[string]any{"id": u.ID, "role": role}
	if modules != nil {
		body["modules"] = modules
	}
	if agentIDs != nil {
		body["agent_ids"] = agentIDs
	}
	r := e.do("POST", "/api/v1/workspaces/"+ws+"/users", e.Owner.Token, body)
	if r.Status != 201 {
		e.t.Fatalf("adding member: %d %s", r.Status, r.Body)
	}
	return e.tokenIn(u, ws)
}

func intp(n int) *int { return &n }

// str returns a field of a decoded record as a string ("<nil>" for null).
func str(m map[string]any, k string) string { return fmt.Sprint(m[k]) }
