package validate

import (
	"net/url"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestAgentStatusFiltersAgreeWithTheirQueries: the campaign and conversation lists' own
// checks (for callers other than the query string) tell a bad agent_id and status in the
// words their query readers use, the same for both lists.
func TestAgentStatusFiltersAgreeWithTheirQueries(t *testing.T) {
	for _, tc := range []struct {
		agentID, status string
	}{
		{"agt_bad", ""},
		{"", "nope"},
		{"agt_bad", "nope"},
	} {
		q := url.Values{}
		if tc.agentID != "" {
			q.Set("agent_id", tc.agentID)
		}
		if tc.status != "" {
			q.Set("status", tc.status)
		}
		_, fromCampaignQuery := CampaignFilterParams(q)
		campaign := CampaignFilter(data.CampaignFilter{AgentID: tc.agentID, Status: tc.status})
		_, fromConversationQuery := ConversationFilterParams(q)
		conversation := ConversationFilter(data.ConversationFilter{AgentID: tc.agentID, Status: tc.status})
		if fromCampaignQuery == nil || campaign == nil || conversation == nil {
			t.Fatalf("%+v: a check passed it (query %v, campaign %v, conversation %v)", tc, fromCampaignQuery, campaign, conversation)
		}
		if fromCampaignQuery.Error() != campaign.Error() {
			t.Errorf("%+v: the campaign list's check says %q; its query reader %q", tc, campaign, fromCampaignQuery)
		}
		if fromConversationQuery.Error() != conversation.Error() {
			t.Errorf("%+v: the conversation list's check says %q; its query reader %q", tc, conversation, fromConversationQuery)
		}
	}
}
