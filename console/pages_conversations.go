package console

import (
	"net/http"

	"github.com/voiceapi/voiceapi/data"
)

// The conversations page (docs/conversations.md, "The console"): every conversation the
// user may see, newest first, read from GET /api/v1/conversations with the session, so
// the API alone decides which (a member limited by agent_ids sees only their agents').
func (h *Handler) conversationRoutes() {
	h.mux.HandleFunc("GET /conversations", h.page(h.conversationList))
}

// conversationFilters are the page's filters, passed on to the API's list as they are.
var conversationFilters = []string{"agent_id", "status"}

// conversationStatuses are the statuses the filter offers, in the API's words.
var conversationStatuses = []string{data.ConversationActive, data.ConversationEnded}

// conversationFilterLabels are the filters' labels, for the API's messages.
var conversationFilterLabels = fieldLabels{"agent_id": "Agent", "status": "Status", "cursor": "Page"}

// mayReadConversations is the API's gate of the conversation routes: the nav shows
// Conversations only to a user it lets through.
func mayReadConversations(p *data.Principal) bool {
	return p.Allows(data.ConversationNeed) == nil
}

func (h *Handler) conversationList(w http.ResponseWriter, r *http.Request) {
	in := r.URL.Query()
	// A bad filter is a 422: shown on the form rather than an error page.
	list, pages, fail, ok := h.filteredList(w, r, "/api/v1/conversations", conversationFilters...)
	if !ok {
		return
	}
	// The gate is the agents module, so the picker's list is the agents the API shows.
	agents := h.agentPicker(r, "agent_id", in.Get("agent_id"))
	h.render(w, r, http.StatusOK, "conversations", &view{Title: "Conversations", Active: "conversations",
		Err: relabel(fail, conversationFilterLabels), D: map[string]any{
			"Conversations": list, "Pages": pages, "Q": in, "AgentPick": agents, "Statuses": conversationStatuses,
			"AgentNames": h.agentNames(r, agents.records, listIDs(list, "agent_id")...),
			"Filtered":   len(filterQuery(in, conversationFilters...)) > 0,
			// A draft's conversation is resumed only by who may talk to drafts (the API
			// refuses the others' messages): the Try panel's rule (tryPanel.CanDraft).
			"CanDraft": data.PrincipalFrom(r.Context()).Allows(data.Write(data.ModuleAgents)) == nil,
		}})
}
