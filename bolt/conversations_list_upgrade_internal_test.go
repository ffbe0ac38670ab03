package bolt

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 24 file kept no list index of conversations. Opening it (schema 25) fills the
// index from the stored conversations, in the opening transaction, so that the list shows
// the conversations of before the upgrade, by workspace, agent and status.
func TestConversationsOfAnOlderFileAreListed(t *testing.T) {
	db, dir, opts := openFile(t)
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	conv := func(id, ws, agent string) *data.StoredConversation {
		return &data.StoredConversation{Conversation: data.Conversation{ID: id, WorkspaceID: ws, AgentID: agent,
			Status: data.ConversationActive, CreatedAt: data.NewTime(t0), UpdatedAt: data.NewTime(t0)}, StartedBy: "usr_1"}
	}
	ended := conv("conv_2", "ws_1", "agt_1")
	endedAt, reason := data.NewTime(t0), data.EndUserEnded
	ended.Status, ended.EndedAt, ended.DisconnectionReason = data.ConversationEnded, &endedAt, &reason
	if err := db.Update(context.Background(), func(tx service.Tx) error {
		for _, c := range []*data.StoredConversation{conv("conv_1", "ws_1", "agt_1"), ended, conv("conv_3", "ws_1", "agt_2"), conv("conv_4", "ws_2", "agt_1")} {
			if err := tx.InsertConversation(c, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// As a schema 24 binary left it: no list index.
	db = asOlderFile(t, db, dir, opts, 24, bucketConversationsListed)
	defer db.Close()
	list := func(ws string, f data.ConversationFilter, agents []string) []string {
		out := []string{}
		if err := db.View(context.Background(), func(tx service.Tx) error {
			got, _, err := tx.ListConversations(ws, f, agents, data.PageRequest{PerPage: 10})
			for _, c := range got {
				out = append(out, c.ID)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		ws     string
		f      data.ConversationFilter
		agents []string
		want   []string
	}{
		{"ws_1", data.ConversationFilter{}, nil, []string{"conv_3", "conv_2", "conv_1"}},
		{"ws_1", data.ConversationFilter{AgentID: "agt_1"}, nil, []string{"conv_2", "conv_1"}},
		{"ws_1", data.ConversationFilter{Status: data.ConversationEnded}, nil, []string{"conv_2"}},
		{"ws_1", data.ConversationFilter{Status: data.ConversationActive}, []string{"agt_2"}, []string{"conv_3"}},
		{"ws_2", data.ConversationFilter{}, nil, []string{"conv_4"}},
	} {
		if got := list(c.ws, c.f, c.agents); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %+v %v: %v, want %v", c.ws, c.f, c.agents, got, c.want)
		}
	}
}
