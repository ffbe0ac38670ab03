package bolt

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 28 file listed events by type and actor, not by agent. Opening it (schema 29)
// lists the stored events by the agent they are about (service.EventAgent, read from each
// event's data, a call's from the call it references) and type, in the opening
// transaction, so that a limited caller's page of events recorded before the upgrade
// walks them (a job.failed by its kind too, schema 30).
func TestEventsOfAnOlderFileAreListedByAgent(t *testing.T) {
	db, dir, opts := openFile(t)
	want := map[service.EventScope][]string{} // newest first
	if err := db.Update(context.Background(), func(stx service.Tx) error {
		at := data.NewTime(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
		call := &data.Call{ID: "call_01JD6ZJ7Q8W9X0Y1Z2A3B4C5D0", WorkspaceID: "ws_1", AgentID: "agt_1", Direction: data.DirectionWeb,
			Status: data.CallEnded, Transcript: []data.TranscriptItem{}, Variables: map[string]any{}, Metadata: map[string]any{}, CreatedAt: at, UpdatedAt: at}
		if err := stx.InsertCall(call); err != nil {
			return err
		}
		payload, err := decodeValue(stx.(tx).b.Bucket(bucketCalls).Get([]byte(call.ID)))
		if err != nil {
			return err
		}
		for i, c := range []struct {
			typ  string
			body []byte
		}{
			{data.EventAgentCreated, []byte(`{"id":"agt_1","name":"a"}`)},
			{data.EventAgentCreated, []byte(`{"id":"agt_2","name":"b"}`)},
			{data.EventKnowledgeBaseCreated, []byte(`{"id":"kb_1","agent_id":"agt_1"}`)},
			{data.EventCallEnded, append([]byte(nil), payload...)}, // stored as a reference to the call
			{data.EventJobFailed, []byte(`{"id":"job_1","agent_id":"agt_2","kind":"x"}`)},
			{data.EventJobFailed, []byte(`{"id":"job_2","agent_id":null,"kind":"x"}`)},
			{data.EventCampaignStarted, []byte(`{"id":"cmp_1","agent_id":"agt_1"}`)},
			{data.EventAPIKeyCreated, []byte(`{"id":1}`)},
		} {
			e := &data.Event{ID: fmt.Sprintf("evt_%03d", i), WorkspaceID: "ws_1", Type: c.typ, Actor: data.Actor{Type: "system"}, Data: c.body, Hash: fmt.Sprint("h", i)}
			e.AgentID, e.Kind = service.EventAgent(e), service.EventKind(e) // as the service appends it; the upgrade drops what it listed
			if err := stx.AppendEvent(e); err != nil {
				return err
			}
			k := service.EventScope{Agent: e.AgentID, Type: e.Type, Kind: e.Kind}
			want[k] = append([]string{e.ID}, want[k]...)
		}
		if ref, _ := parseEvent("evt_003", stx.(tx).b.Bucket(bucketEvents).Get([]byte("evt_003"))); ref.ref != markCallRef {
			return fmt.Errorf("the call's event is not stored as a reference to the call")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// As a schema 28 file: its events listed by type and actor only.
	if err := db.bolt.Update(func(b *bbolt.Tx) error {
		facets := b.Bucket(bucketEventsByFacet)
		var agents [][]byte
		facets.ForEach(func(k, _ []byte) error {
			if bytes.Contains(k, []byte("\x00g\x00")) || bytes.Contains(k, []byte("\x00gk\x00")) || bytes.Contains(k, []byte("\x00tk\x00")) {
				agents = append(agents, bytes.Clone(k))
			}
			return nil
		})
		for _, k := range agents {
			if err := facets.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db = asOlderFile(t, db, dir, opts, 28)
	defer db.Close()
	wantScopes := map[service.EventScope]bool{
		{Agent: "agt_1", Type: data.EventAgentCreated}: true, {Agent: "agt_2", Type: data.EventAgentCreated}: true,
		{Agent: "", Type: data.EventKnowledgeBaseCreated}: true, {Agent: "agt_1", Type: data.EventCallEnded}: true,
		{Agent: "agt_2", Type: data.EventJobFailed, Kind: "x"}: true, {Agent: "", Type: data.EventJobFailed, Kind: "x"}: true,
		{Agent: "agt_1", Type: data.EventCampaignStarted}: true, {Agent: "", Type: data.EventAPIKeyCreated}: true,
	}
	for k := range want {
		if !wantScopes[k] {
			t.Errorf("service.EventAgent gave the pair %+v, which this test does not expect", k)
		}
	}
	for k := range wantScopes {
		f := service.EventFilter{Key: "k", MaxScan: 1, Scopes: []service.EventScope{k}, Keep: func(*data.Event) bool { return true }}
		var got []string
		if err := db.View(context.Background(), func(tx service.Tx) error {
			list, _, err := tx.EventPage("ws_1", f, data.PageRequest{PerPage: 100})
			got = eventIDsOf(list)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want[k]) || len(got) == 0 {
			t.Errorf("%+v: the page %v; want %v", k, got, want[k])
		}
	}
}

func eventIDsOf(list []*data.Event) []string {
	var ids []string
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	return ids
}
