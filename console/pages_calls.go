package console

import (
	"net/http"
	"net/url"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

func (h *Handler) callRoutes() {
	h.mux.HandleFunc("GET /calls", h.page(h.callList))
	h.mux.HandleFunc("GET /calls/{id}", h.page(h.callShow))
	h.mux.HandleFunc("GET /analytics", h.page(h.analytics))
}

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
	list, next, fail, ok := h.filteredList(w, r, "/api/v1/calls", "agent_id", "number_id", "direction", "status")
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, "calls", &view{Title: "Calls", Active: "calls", Err: fail, D: map[string]any{
		"Calls": list, "Next": next, "Q": in, "Agents": h.agentChoices(r),
		"Directions": data.CallDirections, "Statuses": data.CallStatuses,
	}})
}

func (h *Handler) callShow(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "GET", "/api/v1/calls/"+url.PathEscape(r.PathValue("id")), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	c := res.Data()
	h.render(w, r, http.StatusOK, "call", &view{Title: "Call " + str(c["id"]), Active: "calls", D: c})
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
	h.render(w, r, http.StatusOK, "analytics", &view{Title: "Analytics", Active: "analytics", Err: fail, D: map[string]any{
		"Charts": charts, "Totals": totals, "Q": in, "Agents": h.agentChoices(r),
	}})
}
