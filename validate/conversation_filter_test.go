package validate

import (
	"net/url"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestConversationFilterParams: the list's filters at each value's edge: read when valid,
// named when not (given empty too); the service's check of a filter it did not read from
// a query agrees.
func TestConversationFilterParams(t *testing.T) {
	agent := "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ"
	for _, c := range []struct {
		query  string
		want   data.ConversationFilter
		fields []string
	}{
		{"", data.ConversationFilter{}, nil},
		{"status=active", data.ConversationFilter{Status: data.ConversationActive}, nil},
		{"status=ended", data.ConversationFilter{Status: data.ConversationEnded}, nil},
		{"agent_id=" + agent, data.ConversationFilter{AgentID: agent}, nil},
		{"status=", data.ConversationFilter{}, []string{"status"}},
		{"status=ACTIVE", data.ConversationFilter{Status: "ACTIVE"}, []string{"status"}},
		{"status=open", data.ConversationFilter{Status: "open"}, []string{"status"}},
		{"agent_id=", data.ConversationFilter{}, []string{"agent_id"}},
		{"agent_id=agt_", data.ConversationFilter{AgentID: "agt_"}, []string{"agent_id"}},
		{"agent_id=conv_01JD6ZZZZZZZZZZZZZZZZZZZZZ", data.ConversationFilter{AgentID: "conv_01JD6ZZZZZZZZZZZZZZZZZZZZZ"}, []string{"agent_id"}},
		{"agent_id=x&status=y", data.ConversationFilter{AgentID: "x", Status: "y"}, []string{"agent_id", "status"}},
	} {
		q, _ := url.ParseQuery(c.query)
		f, err := ConversationFilterParams(q)
		if f != c.want {
			t.Errorf("?%s read as %+v, want %+v", c.query, f, c.want)
		}
		checkFields(t, c.query, err, c.fields)
		if c.query != "status=" && c.query != "agent_id=" { // empty reads as absent once read
			checkFields(t, c.query+" (the service's check)", ConversationFilter(f), c.fields)
		}
	}
}

func checkFields(t *testing.T, what string, err error, fields []string) {
	t.Helper()
	if len(fields) == 0 {
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
		return
	}
	e, ok := err.(*data.Error)
	if !ok || e.Code != data.EINVALID || len(e.Fields) != len(fields) {
		t.Errorf("%s: %v, want a 422 on %v", what, err, fields)
		return
	}
	for _, p := range fields {
		if _, ok := e.Fields[p]; !ok {
			t.Errorf("%s: %v names no %s", what, e.Fields, p)
		}
	}
}
