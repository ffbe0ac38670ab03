package storetest

import (
	"reflect"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// testPrivacyFields: the privacy members of a workspace and an agent and a call's
// legal_hold are record fields like the others; an engine that keeps records in columns
// must keep these too (retention and redaction read them in the write transaction).
func testPrivacyFields(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	days, week := 30, 7
	wsPrivacy := data.WorkspacePrivacy{RetentionDays: &days, KnowledgeRetentionDays: &week,
		Redaction: data.Redaction{Detectors: []string{"card", "email"}, Rules: []data.RedactionRule{{Name: "order_id", Pattern: `ORD-\d{6}`}}}}
	w := &data.WorkspaceRecord{Workspace: data.Workspace{ID: "ws_1", Name: "W", Privacy: wsPrivacy}}
	a := storedAgent(g.New(data.PrefixAgent), "ws_1", data.AgentStatusDraft)
	a.Privacy = data.AgentPrivacy{RetentionDays: &week, Redaction: data.Redaction{Detectors: []string{"phone"}, Rules: []data.RedactionRule{}}}
	c := newCall(g, "ws_1", a.ID, data.DirectionWeb, data.CallEnded)
	c.LegalHold = true
	update(t, s, func(tx service.Tx) error {
		if err := tx.PutWorkspace(w); err != nil {
			return err
		}
		if err := tx.PutAgent(a, ""); err != nil {
			return err
		}
		return tx.InsertCall(c)
	})
	view(t, s, func(tx service.Tx) error {
		gw, err := tx.Workspace("ws_1")
		if err != nil || gw == nil || !reflect.DeepEqual(gw.Privacy, wsPrivacy) {
			t.Errorf("workspace privacy = %+v, %v; want %+v", gw, err, wsPrivacy)
		}
		ga, err := tx.Agent(a.ID)
		if err != nil || ga == nil || !reflect.DeepEqual(ga.Privacy, a.Privacy) {
			t.Errorf("agent privacy = %+v, %v; want %+v", ga, err, a.Privacy)
		}
		gc, err := tx.Call(c.ID)
		if err != nil || gc == nil || !gc.LegalHold {
			t.Errorf("call legal_hold = %+v, %v; want true", gc, err)
		}
		return nil
	})
	// Lifting the hold is stored like any other change of the call.
	c.LegalHold = false
	update(t, s, func(tx service.Tx) error { return tx.PutCall(c) })
	view(t, s, func(tx service.Tx) error {
		gc, err := tx.Call(c.ID)
		if err != nil || gc == nil || gc.LegalHold {
			t.Errorf("call after lifting the hold = %+v, %v", gc, err)
		}
		return err
	})
}
