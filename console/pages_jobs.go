package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// Background jobs (docs/jobs.md, "Finding a job"): the list with its filters and a job's
// page with its error, attempts and progress. Both read the API, so a member sees the
// jobs GET /api/v1/jobs shows it and nothing else.
func (h *Handler) jobRoutes() {
	h.mux.HandleFunc("GET /jobs", h.page(h.jobList))
	h.mux.HandleFunc("GET /jobs/{id}", h.page(h.jobShow))
}

// jobKinds are the kinds the filter offers, in the order docs/jobs.md lists them; the
// API refuses a kind it does not register, and TestJobKindsAreTheRegisteredOnes keeps
// this list equal to the server's.
var jobKinds = []string{"knowledge_base.fetch_url", "knowledge_base.embed", "analysis.call", "analysis.backfill",
	"agent.test_run", "campaign.start", "conversation.redact_ended", "agent.seal_headers",
	"idempotency.note_starts", "campaign.delete_recipients", "agent.cut_kept_answers", "idempotency.delete_token_answers"}

// jobKindsInWords names every kind of jobKinds in a sentence ("URL fetch, embeddings,
// …, and deleted agent's kept answers cut"), for the page's intro: written from the
// same list the filter offers, it names every kind the server registers.
func jobKindsInWords() string {
	words := make([]string, len(jobKinds))
	for i, k := range jobKinds {
		words[i] = midSentence(label(k))
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// midSentence is a label as written inside a sentence: its first letter in lower case,
// unless its first word is an acronym ("URL fetch").
func midSentence(l string) string {
	first, _, _ := strings.Cut(l, " ")
	if len(first) > 1 && strings.ToUpper(first) == first {
		return l
	}
	return strings.ToLower(l[:1]) + l[1:]
}

// jobFilters are the jobs page's filters, passed on to the API's list.
var jobFilters = []string{"kind", "status", "agent_id"}

// jobFilterLabels are the filters' labels, for the API's messages.
var jobFilterLabels = fieldLabels{"kind": "Kind", "status": "Status", "agent_id": "Agent", "from": "From", "to": "To", "cursor": "Page"}

// mayReadJobs reports whether p holds a module whose jobs it may read: the nav shows
// Jobs only then.
func mayReadJobs(p *data.Principal) bool {
	for _, m := range data.JobModules {
		if p.Allows(data.Read(m)) == nil {
			return true
		}
	}
	return false
}

func (h *Handler) jobList(w http.ResponseWriter, r *http.Request) {
	in := r.URL.Query()
	// A bad filter is a 422: shown on the form rather than an error page.
	list, pages, fail, ok := h.filteredList(w, r, "/api/v1/jobs", jobFilters...)
	if !ok {
		return
	}
	p := data.PrincipalFrom(r.Context())
	var agents []any
	var pick *picker
	if p.Allows(data.Read(data.ModuleAgents)) == nil {
		pick = h.agentPicker(r, "agent_id", in.Get("agent_id"))
		agents = pick.records
	}
	h.render(w, r, http.StatusOK, "jobs", &view{Title: "Jobs", Active: "jobs", Err: relabel(fail, jobFilterLabels), D: map[string]any{
		"Jobs": list, "Pages": pages, "Q": in, "AgentPick": pick, "Kinds": jobKinds, "KindsInWords": jobKindsInWords(), "Statuses": data.JobStatuses,
		"AgentNames": h.agentNames(r, agents, listIDs(list, "agent_id")...),
		"Filtered":   len(filterQuery(in, jobFilters...)) > 0,
	}})
}

func (h *Handler) jobShow(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "GET", "/api/v1/jobs/"+url.PathEscape(r.PathValue("id")), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	j := res.Data()
	var agents names
	if id := str(j["agent_id"]); id != "" {
		agents = h.agentNames(r, nil, id)
	}
	h.render(w, r, http.StatusOK, "job", &view{Title: "Job " + str(j["id"]), Active: "jobs", D: map[string]any{
		"J": j, "AgentNames": agents, "Retrying": str(j["status"]) == data.JobQueued && j["last_error"] != nil,
	}})
}
