package console_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// TestDraftConversationResumedOnlyByWhoMayTalkToDrafts: a conversation with an agent's
// draft is offered to resume, on the conversations page and in the Try panel's list, only
// to a user the API lets send it a message (the right to write agents): a member sees it
// listed, without Resume, while a conversation with the live version is resumable; a
// developer resumes both. (The API refuses a member's message to a draft: 403,
// ConversationService.configOf.)
func TestDraftConversationResumedOnlyByWhoMayTalkToDrafts(t *testing.T) {
	e := testenv.Start(t)
	stand := llmtest.New(t, data.LLMInternal)
	agent := convAgent(t, e, stand, "Desk")
	if res := e.Do(nil, "POST", "/api/v1/agents/"+agent+"/publish", e.Owner.Token, nil); res.Status != http.StatusNoContent {
		t.Fatalf("publish: %d %s", res.Status, res.Body)
	}
	draft := startConv(t, e, agent)
	res := e.Do(nil, "POST", "/api/v1/agents/"+agent+"/conversations", e.Owner.Token, map[string]any{})
	if res.Status != http.StatusCreated {
		t.Fatalf("start live: %d %s", res.Status, res.Body)
	}
	live := res.Data()["id"].(string)

	for _, c := range []struct {
		role       string
		draftOffer bool
	}{{data.RoleMember, false}, {data.RoleDeveloper, true}} {
		u := e.NewUser(c.role+"@example.com", false)
		addMember(t, e, u, map[string]any{"role": c.role, "modules": []string{data.ModuleAgents}})
		s := e.SignIn(u, e.Owner.WorkspaceID)
		page := string(e.Do(s.Client, "GET", "/conversations", "", nil).Body)
		panel := string(e.Do(s.Client, "GET", "/agents/"+agent+"/try", "", nil).Body)
		for id, want := range map[string]bool{draft: c.draftOffer, live: true} {
			onPage := regexp.MustCompile(`href="/agents/` + agent + `\?resume=` + id + `#try" data-resume`).MatchString(page)
			inPanel := regexp.MustCompile(`data-try-resume="` + id + `"`).MatchString(panel)
			if onPage != want || inPanel != want {
				t.Errorf("%s, conversation %s (draft %v): Resume on the page %v, in the panel %v; want %v", c.role, id, id == draft, onPage, inPanel, want)
			}
		}
	}
}
