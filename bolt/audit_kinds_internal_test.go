package bolt

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 29 file listed events by agent and type, not by kind. Opening it (schema 30)
// lists the stored events that have a kind (job.failed's job kind, service.EventKind) by
// it, of every workspace, in the opening transaction, so that the page of a caller who
// reads some job kinds walks the failures recorded before the upgrade, and takes them out
// of their agent's pair without a kind; other events, and a failure whose data names no
// kind, are listed by none.
func TestEventsOfAnOlderFileAreListedByKind(t *testing.T) {
	db, dir, opts := openFile(t)
	type wsScope struct {
		ws string
		s  service.EventScope
	}
	want := map[wsScope][]string{} // newest first
	type listed struct {
		wsScope
		id string
	}
	var failures []listed // the failures of a kind, as schema 29 listed them
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		for i, c := range []struct {
			ws, typ, body string
		}{
			{"ws_1", data.EventJobFailed, `{"id":"job_1","agent_id":"agt_1","kind":"run"}`},
			{"ws_1", data.EventJobFailed, `{"id":"job_2","agent_id":null,"kind":"embed"}`},
			{"ws_1", data.EventAgentCreated, `{"id":"agt_1","kind":"run"}`},
			{"ws_2", data.EventJobFailed, `{"id":"job_3","agent_id":"agt_1","kind":"run"}`},
			{"ws_1", data.EventJobFailed, `{"id":"job_4","agent_id":"agt_2","kind":"run"}`},
			{"ws_1", data.EventJobFailed, `{"id":"job_5","agent_id":"agt_1","kind":7}`},
			{"ws_3", data.EventKnowledgeBaseCreated, `{"id":"kb_1"}`},
		} {
			e := &data.Event{ID: fmt.Sprintf("evt_%03d", i), WorkspaceID: c.ws, Type: c.typ, Actor: data.Actor{Type: "system"}, Data: []byte(c.body), Hash: fmt.Sprint("h", i)}
			e.AgentID, e.Kind = service.EventAgent(e), service.EventKind(e) // as the service appends it; the upgrade drops what it listed
			if err := stx.AppendEvent(e); err != nil {
				return err
			}
			if e.Kind != "" {
				failures = append(failures, listed{wsScope{c.ws, service.EventScope{Agent: e.AgentID, Type: e.Type}}, e.ID})
			}
			for _, k := range []service.EventScope{{Agent: e.AgentID, Type: e.Type, Kind: e.Kind}, {Type: e.Type, Kind: e.Kind, AnyAgent: true}} {
				if e.Kind != "" {
					want[wsScope{c.ws, k}] = append([]string{e.ID}, want[wsScope{c.ws, k}]...)
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// As a schema 29 file: its events listed by type, actor and agent only, a failure of
	// a kind too.
	if err := db.bolt.Update(func(b *bbolt.Tx) error {
		facets := b.Bucket(bucketEventsByFacet)
		for _, k := range failures {
			if err := indexPut(facets, eventAgentScope(k.ws, k.s.Agent, k.s.Type), k.id); err != nil {
				return err
			}
		}
		var kinds [][]byte
		facets.ForEach(func(k, _ []byte) error {
			if bytes.Contains(k, []byte("\x00gk\x00")) || bytes.Contains(k, []byte("\x00tk\x00")) {
				kinds = append(kinds, bytes.Clone(k))
			}
			return nil
		})
		if len(kinds) != 8 {
			return fmt.Errorf("%d kind entries at append; want 8, two each of four failures", len(kinds))
		}
		for _, k := range kinds {
			if err := facets.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db = asOlderFile(t, db, dir, opts, 29)
	defer db.Close()
	if len(want) != 7 {
		t.Fatalf("service.EventKind gave %d scopes; this test expects 7: %v", len(want), want)
	}
	for k, ids := range want {
		f := service.EventFilter{Key: "k", MaxScan: 100, Scopes: []service.EventScope{k.s}, Keep: func(*data.Event) bool { return true }}
		var got []string
		if err := db.View(context.Background(), func(tx service.Tx) error {
			list, _, err := tx.EventPage(k.ws, f, data.PageRequest{PerPage: 100})
			got = eventIDsOf(list)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, ids) {
			t.Errorf("%+v: the page %v; want %v", k, got, ids)
		}
	}
	// A failure of a kind is no longer of its agent's pair without a kind.
	for _, k := range failures {
		f := service.EventFilter{Key: "k", MaxScan: 100, Scopes: []service.EventScope{k.s}, Keep: func(*data.Event) bool { return true }}
		if err := db.View(context.Background(), func(tx service.Tx) error {
			list, _, err := tx.EventPage(k.ws, f, data.PageRequest{PerPage: 100})
			if ids := eventIDsOf(list); err == nil && slices.Contains(ids, k.id) {
				t.Errorf("%+v: the page %v holds %s, a failure of a kind", k.wsScope, ids, k.id)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	var entries int
	if err := db.bolt.View(func(b *bbolt.Tx) error {
		return b.Bucket(bucketEventsByFacet).ForEach(func(k, _ []byte) error {
			if bytes.Contains(k, []byte("\x00gk\x00")) || bytes.Contains(k, []byte("\x00tk\x00")) {
				entries++
			}
			return nil
		})
	}); err != nil || entries != 8 {
		t.Errorf("%d kind entries after the upgrade (%v); want 8, as at append", entries, err)
	}
}
