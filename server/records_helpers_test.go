package server_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

var testIDs = data.NewIDGen()

// newAgent stores a minimal agent row in workspace ws (agents have their own issue; the
// number and call rules only read workspace_id and published_version).
func (e *env) newAgent(ws string, published *int) string {
	e.t.Helper()
	id := testIDs.New(data.PrefixAgent)
	a := &data.StoredAgent{Agent: data.Agent{ID: id, WorkspaceID: ws, Name: "agent", Status: "draft", PublishedVersion: published}}
	if published != nil {
		a.LastVersion = *published // the versions up to it were given out, as publishing does
	}
	if err := e.DB.Update(context.Background(), func(tx service.Tx) error { return tx.PutAgent(a, "") }); err != nil {
		e.t.Fatal(err)
	}
	return id
}

// eventTypes lists the types of ws's events, oldest first.
func (e *env) eventTypes(ws string) []string {
	e.t.Helper()
	var types []string
	err := e.DB.View(context.Background(), func(tx service.Tx) error {
		return tx.EventsNewestFirst(ws, func(ev *data.Event) (bool, error) {
			types = append(types, ev.Type)
			return true, nil
		})
	})
	if err != nil {
		e.t.Fatal(err)
	}
	slices.Reverse(types)
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
