package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"move_keeps_event_kinds", testMoveKeepsEventKinds})
}

// testMoveKeepsEventKinds: an event moved by service.MoveInstallation is listed under its
// kind in the destination as in the source. Storage reads an event back without its Kind
// (it is neither shown nor hashed), so the move states it again (service.EventKind);
// without that, a caller who reads some job kinds would find no job.failed event in the
// moved installation. Its agent is checked beside it, stated the same way.
func testMoveKeepsEventKinds(t *testing.T, open Opener) {
	src, dst := openMoveEnds(t, open)
	g := stepIDs()
	const ws = moveWorkspace
	ids := map[string]string{}
	update(t, src, func(tx service.Tx) error {
		for _, c := range []struct{ name, typ, agent, kind, body string }{
			{"run", data.EventJobFailed, "agt_1", "run", `{"kind":"run","agent_id":"agt_1"}`},
			{"embed", data.EventJobFailed, "", "embed", `{"kind":"embed","agent_id":null}`},
			{"update", data.EventAgentUpdated, "agt_1", "", `{"id":"agt_1"}`},
		} {
			e := &data.Event{ID: g.New(data.PrefixEvent), WorkspaceID: ws, Type: c.typ, Data: []byte(c.body),
				Hash: "h-" + c.name, Actor: data.Actor{Type: "system"}, AgentID: c.agent, Kind: c.kind}
			if err := tx.AppendEvent(e); err != nil {
				return err
			}
			ids[c.name] = e.ID
		}
		return nil
	})
	if _, err := service.MoveInstallation(context.Background(), src, dst, nil); err != nil {
		t.Fatal(err)
	}
	failed := data.EventJobFailed
	for _, c := range []struct {
		name  string
		scope service.EventScope
		want  []string
	}{
		{"kind run, any agent", service.EventScope{Type: failed, Kind: "run", AnyAgent: true}, []string{ids["run"]}},
		{"kind run, agt_1", service.EventScope{Agent: "agt_1", Type: failed, Kind: "run"}, []string{ids["run"]}},
		{"kind embed, no agent", service.EventScope{Type: failed, Kind: "embed"}, []string{ids["embed"]}},
		{"kind dial", service.EventScope{Type: failed, Kind: "dial", AnyAgent: true}, nil},
		{"without a kind, agt_1", service.EventScope{Agent: "agt_1", Type: failed}, nil},
	} {
		for name, s := range map[string]service.Store{"source": src, "destination": dst} {
			view(t, s, func(tx service.Tx) error {
				list, _, err := tx.EventPage(ws, service.EventFilter{Key: "k", Scopes: []service.EventScope{c.scope}}, data.PageRequest{PerPage: 10})
				if got := eventIDs(list); err != nil || !slices.Equal(got, c.want) {
					t.Errorf("%s, in the %s: %v, %v; want %v", c.name, name, got, err, c.want)
				}
				return nil
			})
		}
	}
}

// moveWorkspace is the workspace the move tests fill in their source.
const moveWorkspace = "ws_mv"

// openMoveEnds opens a move's source, holding moveWorkspace, and its empty destination.
func openMoveEnds(t *testing.T, open Opener) (src, dst service.Store) {
	src, dst = open(t), open(t)
	update(t, src, func(tx service.Tx) error {
		return tx.PutWorkspace(&data.WorkspaceRecord{Workspace: data.Workspace{ID: moveWorkspace, Name: "W"}})
	})
	return src, dst
}
