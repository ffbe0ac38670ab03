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
	list, next, fail, ok := h.filteredList(w, r, "/api/v1/calls", callFilters...)
	if !ok {
		return
	}
	agents, numbers := h.agentChoices(r), h.numberChoices(r)
	// The export takes the same filters; a download link, so the browser saves the file.
	// The query is already encoded: as a plain string, html/template would escape its =
	// and & again, and the API would read one parameter named "direction=web".
	export := filterQuery(in, callFilters...)
	p := data.PrincipalFrom(r.Context())
	h.render(w, r, http.StatusOK, "calls", &view{Title: "Calls", Active: "calls", Err: relabel(fail, callFilterLabels), D: map[string]any{
		"Calls": list, "Next": next, "Q": in, "Agents": agents, "Numbers": numbers,
		"AgentNames": h.agentNames(r, agents, listIDs(list, "agent_id")...), "NumberNames": numberNames(numbers),
		"Directions": data.CallDirections, "Statuses": data.CallStatuses, "Export": template.URL(export.Encode()),
		"Filtered": len(filterQuery(in, callFilters...)) > 0, "CanWrite": p.Allows(data.Write(data.ModuleCallHistory)) == nil,
	}})
}

// callFilterLabels are the calls filters' labels, for the API's messages.
var callFilterLabels = fieldLabels{"agent_id": "Agent", "number_id": "Number", "direction": "Direction",
	"status": "Status", "from": "From", "to": "To", "cursor": "Page"}

func (h *Handler) callShow(w http.ResponseWriter, r *http.Request) {
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
	h.render(w, r, http.StatusOK, "call", &view{Title: "Call " + str(c["id"]), Active: "calls", D: map[string]any{
		"C": c, "AgentNames": h.agentNames(r, nil, str(c["agent_id"])), "NumberNames": numbers,
		"CanWrite": p.Allows(data.Write(data.ModuleCallHistory)) == nil,
	}})
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
		Title: title + "?",
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
			"Charts": charts, "Totals": totals, "Q": in, "Agents": h.agentChoices(r),
		}})
}
