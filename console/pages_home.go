package console

import (
	"net/http"
	"net/url"

	"github.com/voiceapi/voiceapi/data"
)

// step is one of a new workspace's first steps.
type step struct {
	Title, Text  string
	Href, Action string
	Done         bool
}

// home is the console's front page. Until a workspace has an agent that is published and
// answers a number, it shows the first steps (create an agent, try it, publish, connect a
// number), each ticked once done, instead of empty tables; then it opens the first
// section. Members who cannot add agents (a member limited to some agents among them) go
// to their first section at once.
func (h *Handler) home(w http.ResponseWriter, r *http.Request) {
	p := data.PrincipalFrom(r.Context())
	items := nav(p)
	if p.Allows(data.NeedAgentCreate()) != nil {
		http.Redirect(w, r, items[0].Href, http.StatusSeeOther)
		return
	}
	steps := h.firstSteps(r)
	left, next := 0, -1
	for i, s := range steps {
		if !s.Done {
			left++
			if next < 0 {
				next = i
			}
		}
	}
	if left == 0 {
		http.Redirect(w, r, items[0].Href, http.StatusSeeOther)
		return
	}
	h.render(w, r, http.StatusOK, "home", &view{Title: "Get started", D: map[string]any{"Steps": steps, "Left": left, "Next": next}})
}

// firstSteps reads, as the user, what the workspace has done of its first steps. A step
// the user may not read (a module they lack) shows as not done, with its link.
func (h *Handler) firstSteps(r *http.Request) []step {
	first := func(path string, q url.Values) map[string]any {
		q.Set("per_page", "1")
		res, err := h.call(r, "GET", path, q, nil)
		if err != nil || len(res.List()) == 0 {
			return nil
		}
		m, _ := res.List()[0].(map[string]any)
		return m
	}
	agent := first("/api/v1/agents", url.Values{})
	published := first("/api/v1/agents", url.Values{"status": {data.AgentStatusPublished}})
	tried := first("/api/v1/calls", url.Values{"direction": {data.DirectionWeb}})
	connected := false
	if res, err := h.call(r, "GET", "/api/v1/numbers", url.Values{"per_page": {"100"}}, nil); err == nil {
		for _, n := range res.List() {
			m, _ := n.(map[string]any)
			connected = connected || str(m["inbound_agent_id"]) != ""
		}
	}
	// Without an agent yet, trying and publishing start at the agents page.
	agentPage, versionsPage := "/agents", "/agents"
	if agent != nil {
		agentPage = "/agents/" + url.PathEscape(str(agent["id"]))
		versionsPage = agentPage + "/versions"
	}
	return []step{
		{Title: "Create an agent", Done: agent != nil, Href: "/agents#new-agent", Action: "Create an agent",
			Text: "An agent is a prompt, a language model, a voice and the tools it may use. It starts as a draft with working defaults."},
		{Title: "Try it", Done: tried != nil, Href: agentPage + "#try", Action: "Open the agent",
			Text: "Talk to the draft in text before it takes a call: check how it greets, answers and uses its tools."},
		{Title: "Publish it", Done: published != nil, Href: versionsPage, Action: "Publish a version",
			Text: "Publishing makes the draft a numbered version, the one calls run. You can compare versions and roll back."},
		{Title: "Connect a number", Done: connected, Href: "/numbers#add-number", Action: "Add a number",
			Text: "Add your Twilio, Telnyx, Vonage or SIP number and choose the agent that answers it."},
	}
}
