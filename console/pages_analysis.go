package console

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
)

// The agent's post-call analysis page: a chart set per declared field (its distribution,
// per version), the success rate per day, and what the agent's calls cost per day and per
// version, from GET /api/v1/analytics/analysis and /calls (module analytics).

func (h *Handler) analysisRoutes() {
	h.mux.HandleFunc("GET /agents/{id}/analysis", h.page(h.agentAnalysis))
	h.mux.HandleFunc("POST /agents/{id}/analysis/backfill", h.action(h.analysisBackfill))
}

// analysisBackfill queues the analysis of the agent's calls of a range of days (POST
// /agents/{id}/analysis/backfill): how a field added since fills past calls. A refusal
// (a bad range, a configuration that asks for nothing) shows beside the form.
func (h *Handler) analysisBackfill(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	body := map[string]any{"from": dayParam(r.PostFormValue("from"), false), "to": dayParam(r.PostFormValue("to"), true)}
	if v := r.PostFormValue("agent_version"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			body["agent_version"] = v // the API names the fault
		} else {
			body["agent_version"] = n
		}
	}
	res, err := h.call(r, "POST", "/api/v1/agents/"+url.PathEscape(id)+"/analysis/backfill", nil, body)
	if err != nil {
		if e, ok := err.(*apiError); ok && e.Status == http.StatusUnprocessableEntity {
			h.analysisPage(w, r, relabel(e, fieldLabels{"from": "From", "to": "To", "agent_version": "Version"}))
			return
		}
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/agents/"+url.PathEscape(id)+"/analysis", flash{At: "backfill",
		Notice: "Backfill queued (job " + str(res.Data()["id"]) + "): the agent's model analyzes the range's calls in the background, and the figures count them as they are done."})
}

// fieldFigures is one field's section of the page.
type fieldFigures struct {
	Name, Type string
	Count      string
	Number     map[string]any // mean, p50, p90; nil for other types
	Charts     []chart
}

func (h *Handler) agentAnalysis(w http.ResponseWriter, r *http.Request) {
	h.analysisPage(w, r, nil)
}

// analysisPage renders the page; backfillErr is a refused backfill, shown beside its form.
func (h *Handler) analysisPage(w http.ResponseWriter, r *http.Request, backfillErr *apiError) {
	id := r.PathValue("id")
	res, err := h.call(r, "GET", "/api/v1/agents/"+url.PathEscape(id), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	a := res.Data()
	in := r.URL.Query()
	q := filterQuery(in, "agent_version")
	q.Set("agent_id", id)
	q.Set("interval", data.IntervalDay)
	var fields []fieldFigures
	var success []chart
	var fail *apiError
	for _, name := range analysisFieldNames(a) {
		fq := url.Values{}
		for k, v := range q {
			fq[k] = v
		}
		fq.Set("field", name)
		fr, err := h.call(r, "GET", "/api/v1/analytics/analysis", fq, nil)
		if err != nil {
			// A 422 is the filter's fault (a bad range, a version the agent lacks on
			// agent_version): shown above the form. A 404 is the agent gone meanwhile.
			if fail = err.(*apiError); fail.Status != http.StatusUnprocessableEntity {
				h.fail(w, r, err)
				return
			}
			break
		}
		f := fr.Data()
		if success == nil {
			success = successCharts(f)
		}
		ff := fieldFigures{Name: name, Type: str(f["type"]), Count: trimNum(num(f["count"])), Charts: fieldCharts(name, f)}
		ff.Number, _ = f["number"].(map[string]any)
		fields = append(fields, ff)
	}
	var costs []chart
	if fail == nil {
		cq := filterQuery(in)
		cq.Set("agent_id", id)
		cq.Set("interval", data.IntervalDay)
		cr, err := h.call(r, "GET", "/api/v1/analytics/calls", cq, nil)
		if err != nil {
			if fail = err.(*apiError); fail.Status != http.StatusUnprocessableEntity {
				h.fail(w, r, err)
				return
			}
		} else {
			costs = costCharts(cr.Data())
		}
	}
	name, _ := a["name"].(string)
	status := http.StatusOK
	if backfillErr != nil {
		status = backfillErr.Status
	}
	p := data.PrincipalFrom(r.Context())
	h.render(w, r, status, "analysis", &view{Title: name + " · analysis", Active: "agents", Err: fail, D: map[string]any{
		"Agent": a, "Fields": fields, "Success": success, "Costs": costs, "Q": in, "Versions": versionChoices(a),
		"BackfillErr": backfillErr, "CanBackfill": p.Allows(data.Write(data.ModuleCallHistory)) == nil,
		"CanPrice": p.Allows(data.NeedWorkspaceAdmin()) == nil, // the price table's (the API's rule)
	}})
}

// analysisFieldNames are the fields the page charts: the agent's declared fields, then
// call_successful when it has a success criterion (its rate is charted on its own).
func analysisFieldNames(a map[string]any) []string {
	var out []string
	fields, _ := lookup(a, "analysis_config.fields").([]any)
	for _, f := range fields {
		if m, ok := f.(map[string]any); ok {
			out = append(out, str(m["name"]))
		}
	}
	if len(out) == 0 && lookup(a, "analysis_config.success_criterion") != nil {
		out = append(out, data.AnalysisKeySuccessful)
	}
	return out
}

// versionChoices are the agent's published versions, newest first, for the filter.
func versionChoices(a map[string]any) []string {
	n := int(num(a["published_version"]))
	var out []string
	for v := n; v >= 1; v-- {
		out = append(out, strconv.Itoa(v))
	}
	return out
}
