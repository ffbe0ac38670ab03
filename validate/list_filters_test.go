package validate

import (
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestAgentFilter: the agents list's filters, each refused alone under its own name.
func TestAgentFilter(t *testing.T) {
	for _, c := range []struct {
		name string
		f    data.AgentFilter
		bad  string // the parameter refused, "" for none
	}{
		{"none", data.AgentFilter{}, ""},
		{"a status", data.AgentFilter{Status: data.AgentStatusDraft}, ""},
		{"an unknown status", data.AgentFilter{Status: "live"}, "status"},
		{"a name at the bound", data.AgentFilter{Name: chars(MaxAgentName)}, ""},
		{"a name past it", data.AgentFilter{Name: chars(MaxAgentName + 1)}, "name"},
		{"a knowledge base", data.AgentFilter{KnowledgeBaseID: "kb_01JD6000000000000000000001"}, ""},
		{"an agent's id as the knowledge base", data.AgentFilter{KnowledgeBaseID: "agt_01JD6000000000000000000001"}, "knowledge_base_id"},
		{"no id", data.AgentFilter{KnowledgeBaseID: "facts"}, "knowledge_base_id"},
	} {
		err := AgentFilter(c.f)
		e, _ := err.(*data.Error)
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, faultsOf(err))
		case c.bad != "" && (e == nil || len(e.Fields) != 1 || len(e.Fields[c.bad]) == 0):
			t.Errorf("%s: %v, want a fault on %s alone", c.name, faultsOf(err), c.bad)
		}
	}
}
