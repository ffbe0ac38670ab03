package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
)

// The "Try it" panel of the agent page (conventions §21): the page loads it as a fragment
// and static/try.js talks to the conversation routes of the REST API from the browser,
// with the session cookie and its CSRF token, streaming each reply.

// tryPanel is what the panel's template needs.
type tryPanel struct {
	AgentID string
	// Live is the published version a live conversation runs; 0 when none.
	Live int
	// CanDraft tells whether the caller may talk to the draft (the right to write agents).
	CanDraft bool
	// Variables are the {{variables}} the draft's configuration uses, built-ins aside: a
	// field each, so a conversation can start.
	Variables []string
	// Conversations are the agent's newest conversations (tryListSize, from
	// GET /api/v1/conversations, so the caller sees those the API lists it), without
	// their messages: an active one can be resumed in the panel.
	Conversations []any
	// MoreConversations tells there are older ones than those listed.
	MoreConversations bool
	// EndReasons name each way a conversation ends in words, for try.js to say how one
	// ended ("Caller ended", not the API's user_ended).
	EndReasons map[string]string
}

// tryListSize is how many of the agent's conversations the panel lists, newest first;
// the conversations page (/conversations?agent_id=…) lists them all.
const tryListSize = 10

// conversationEndReasons are the disconnection reasons a conversation ends with (data, conventions §21).
var conversationEndReasons = []string{data.EndUserEnded, data.EndAgentEnded, data.EndTransferred, data.EndMaxTurns, data.EndExpired}

// agentTry serves GET /agents/{id}/try: the panel alone.
func (h *Handler) agentTry(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	a := res.Data()
	p := data.PrincipalFrom(r.Context())
	d := tryPanel{AgentID: id, CanDraft: p.Allows(data.Write(data.ModuleAgents)) == nil}
	if v, ok := a["published_version"].(float64); ok {
		d.Live = int(v)
	}
	d.Variables = agentVariables(a)
	// The list is a help, not the panel: a failure to read it leaves the panel whole.
	if list, err := h.call(r, "GET", "/api/v1/conversations", url.Values{"agent_id": {id}, "per_page": {strconv.Itoa(tryListSize)}}, nil); err == nil {
		d.Conversations, d.MoreConversations = list.List(), list.NextCursor() != ""
	}
	d.EndReasons = map[string]string{}
	for _, reason := range conversationEndReasons {
		d.EndReasons[reason] = label(reason)
	}
	h.renderPart(w, r, "try", "panel", d)
}

// agentVariables lists the variables an agent record's configuration uses, built-ins
// aside (the server gives those).
func agentVariables(a map[string]any) []string {
	raw, err := json.Marshal(a)
	if err != nil {
		return nil
	}
	var cfg data.AgentConfig
	if json.Unmarshal(raw, &cfg) != nil {
		return nil
	}
	var out []string
	for _, name := range conversation.ConfigVariables(&cfg) {
		if !slices.Contains(conversation.BuiltInVariables, name) {
			out = append(out, name)
		}
	}
	return out
}
