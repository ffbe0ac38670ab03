package console

import (
	"html/template"
	"net/http"
	"net/url"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

func (h *Handler) callRoutes() {
	h.mux.HandleFunc("GET /calls", h.page(h.callList))
	h.mux.HandleFunc("GET /calls/{id}", h.page(h.callShow))
	h.mux.HandleFunc("GET /calls/{id}/delete", h.page(h.callDeleteConfirm))
	h.mux.HandleFunc("POST /calls/{id}/delete", h.action(h.callDelete))
	h.mux.HandleFunc("POST /calls/{id}/analyze", h.action(h.callAnalyze))
	h.mux.HandleFunc("POST /calls/{id}/test", h.action(h.callToTest))
	h.mux.HandleFunc("GET /analytics", h.page(h.analytics))
}

// callFilters are the calls page's filters, passed on to the API's list and export.
var callFilters = []string{"agent_id", "number_id", "direction", "status"}

// dayParam turns a date picker's YYYY-MM-DD into the API's RFC 3339 (midnight UTC,
// the day after for an end date, so that "to" includes its day); anything else is passed
// on for the API to judge.
func dayParam(s string, end bool) string {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		return s
	}
	if end {
		d = d.AddDate(0, 0, 1)
	}
	return d.Format(time.RFC3339)
}

func (h *Handler) callList(w http.ResponseWriter, r *http.Request) {
	in := r.URL.Query()
	// A bad filter is a 422: shown on the form rather than an error page.
	list, pages, fail, ok := h.filteredList(w, r, "/api/v1/calls", callFilters...)
	if !ok {
		return
	}
	agents, numbers := h.agentPicker(r, "agent_id", in.Get("agent_id")), h.numberPicker(r, "number_id", false, in.Get("number_id"))
	// The export takes the same filters; a download link, so the browser saves the file.
	// The query is already encoded: as a plain string, html/template would escape its =
	// and & again, and the API would read one parameter named "direction=web".
	export := filterQuery(in, callFilters...)
	p := data.PrincipalFrom(r.Context())
	h.render(w, r, http.StatusOK, "calls", &view{Title: "Calls", Active: "calls", Err: relabel(fail, callFilterLabels), D: map[string]any{
		"Calls": list, "Pages": pages, "Q": in, "AgentPick": agents, "NumberPick": numbers,
		"AgentNames": h.agentNames(r, agents.records, listIDs(list, "agent_id")...),
		"Directions": data.CallDirections, "Statuses": data.CallStatuses, "Export": template.URL(export.Encode()),
		"Filtered": len(filterQuery(in, callFilters...)) > 0, "CanWrite": p.Allows(data.Write(data.ModuleCallHistory)) == nil,
		// Whether an empty list of choices means none exist (no filter) or none visible
		// (a box for an id).
		"SeesAgents": p.Allows(data.Read(data.ModuleAgents)) == nil, "SeesNumbers": p.Allows(data.Read(data.ModulePhoneNumbers)) == nil,
	}})
}

// callFilterLabels are the calls filters' labels, for the API's messages.
var callFilterLabels = fieldLabels{"agent_id": "Agent", "number_id": "Number", "direction": "Direction",
	"status": "Status", "from": "From", "to": "To", "cursor": "Page"}

func (h *Handler) callShow(w http.ResponseWriter, r *http.Request) {
	h.callPage(w, r, "", nil)
}

// callPage renders a call; refused, with the refusal of the action named by form (a
// 422 of analyze or of a test from the call) shown beside that action.
func (h *Handler) callPage(w http.ResponseWriter, r *http.Request, form string, refused *apiError) {
	res, err := h.call(r, "GET", "/api/v1/calls/"+url.PathEscape(r.PathValue("id")), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	c := res.Data()
	numbers := names{}
	if id := str(c["number_id"]); id != "" {
		if n, err := h.call(r, "GET", "/api/v1/numbers/"+url.PathEscape(id), nil, nil); err == nil {
			numbers[id] = numberLabel(n.Data())
		}
	}
	p := data.PrincipalFrom(r.Context())
	status := http.StatusOK
	if refused != nil {
		status = refused.Status
	}
	h.render(w, r, status, "call", &view{Title: "Call " + str(c["id"]), Active: "calls", Err: refused, D: map[string]any{
		"C": c, "AgentNames": h.agentNames(r, nil, str(c["agent_id"])), "NumberNames": numbers, "Form": form,
		"CanWrite":       p.Allows(data.Write(data.ModuleCallHistory)) == nil,
		"CanWriteAgents": p.Allows(data.Write(data.ModuleAgents)) == nil,
	}})
}

// callAnalyze queues the call's analysis by its agent's model (POST /calls/{id}/analyze);
// a call whose version asks for nothing is told so on the call's page, with what to do.
func (h *Handler) callAnalyze(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := h.call(r, "POST", "/api/v1/calls/"+url.PathEscape(id)+"/analyze", nil, nil); err != nil {
		h.callRefused(w, r, "analyze", err)
		return
	}
	h.done(w, r, "/calls/"+url.PathEscape(id), flash{Notice: "Analysis queued: the agent's model fills it in shortly; reload the page to see it.", At: "analyze"})
}

// callToTest makes a scripted test of the call for its agent (POST
// /agents/{agent_id}/tests/from-call/{call_id}) and opens it, to sharpen its criteria.
func (h *Handler) callToTest(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := h.call(r, "GET", "/api/v1/calls/"+url.PathEscape(id), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	agent := str(res.Data()["agent_id"])
	made, err := h.call(r, "POST", "/api/v1/agents/"+url.PathEscape(agent)+"/tests/from-call/"+url.PathEscape(id), nil, nil)
	if err != nil {
		h.callRefused(w, r, "test", err)
		return
	}
	h.done(w, r, "/agents/"+url.PathEscape(agent)+"/tests/"+url.PathEscape(str(made.Data()["id"])),
		flash{Notice: "Test made from the call: its caller's turns are the script. Add mocks and sharpen its criteria before relying on it."})
}

// callRefused shows a 409 or 422 of a call's action on the call's page; anything else
// is an error page.
func (h *Handler) callRefused(w http.ResponseWriter, r *http.Request, form string, err error) {
	if e, ok := err.(*apiError); ok && (e.Status == http.StatusUnprocessableEntity || e.Status == http.StatusConflict) {
		h.callPage(w, r, form, e)
		return
	}
	h.fail(w, r, err)
}

// callDeleteConfirm names the call and what its deletion takes.
func (h *Handler) callDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "GET", "/api/v1/calls/"+url.PathEscape(r.PathValue("id")), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	c := res.Data()
	agent := h.agentNames(r, nil, str(c["agent_id"])).Of(c["agent_id"])
	title := "Delete the " + label(c["direction"]) + " call with " + agent
	if t, err := time.Parse(time.RFC3339Nano, str(c["created_at"])); err == nil {
		title += " of " + t.UTC().Format(whenLayout)
	}
	h.confirmPage(w, r, "calls", confirmation{
		Title: title + "?", Need: needOf(data.Write(data.ModuleCallHistory)),
		Lost: []string{"Its transcript, recording link, variables, analysis and metadata.",
			"Its place in the analytics: the charts count it no more."},
		Kept:   []string{"The minutes it used still count towards this month's subscription."},
		Button: "Delete call", Cancel: "/calls/" + url.PathEscape(str(c["id"])), Crumb: "Calls", CrumbHref: "/calls",
	}, http.StatusOK, nil)
}

func (h *Handler) callDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/calls/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err) // a call on legal hold is refused with the API's reason
		return
	}
	h.done(w, r, "/calls", flash{Notice: "Call deleted."})
}

func (h *Handler) analytics(w http.ResponseWriter, r *http.Request) {
	in := r.URL.Query()
	res, err := h.call(r, "GET", "/api/v1/analytics/calls", filterQuery(in, "agent_id", "interval"), nil)
	var fail *apiError
	var charts []chart
	var totals map[string]any
	if err != nil {
		if fail = err.(*apiError); fail.Status != http.StatusUnprocessableEntity {
			h.fail(w, r, err)
			return
		}
	} else {
		a := res.Data()
		totals, _ = a["totals"].(map[string]any)
		charts = analyticsCharts(a, in.Get("interval"))
	}
	h.render(w, r, http.StatusOK, "analytics", &view{Title: "Analytics", Active: "analytics",
		Err: relabel(fail, fieldLabels{"from": "From", "to": "To", "interval": "Per", "agent_id": "Agent"}), D: map[string]any{
			"Charts": charts, "Totals": totals, "Q": in, "AgentPick": h.agentPicker(r, "agent_id", in.Get("agent_id")),
			"SeesAgents": data.PrincipalFrom(r.Context()).Allows(data.Read(data.ModuleAgents)) == nil,
		}})
}
