package console

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
)

// The "Variables and rollout" panel of the agent page (conventions §23): which {{variables}}
// the configuration uses and where each gets its value, and the agent's rollout: each
// variant's weight and figures, and the form that starts, changes or ends it. The page
// loads the panel as a fragment; the forms post here, and a refused form shows the panel
// on a page of its own with the API's messages.

func (h *Handler) rolloutRoutes() {
	m := h.mux
	m.HandleFunc("GET /agents/{id}/rollout-panel", h.page(h.agentRolloutPanel))
	m.HandleFunc("GET /agents/{id}/rollout", h.page(h.agentRolloutPage))
	m.HandleFunc("POST /agents/{id}/rollout", h.action(h.agentRolloutSet))
	m.HandleFunc("POST /agents/{id}/rollout/end", h.action(h.agentRolloutEnd))
}

// usedVariable is one {{name}} of the configuration and where its value comes from.
type usedVariable struct {
	Name, Source string
}

// variantRow is one variant with its figures, rates as percentages ("—" without calls).
type variantRow struct {
	Version, Weight                     int
	Calls, Failed, Analyzed, Successful int64
	FailedRate, SuccessRate             string
	RolledBack                          bool
}

// rolloutPanel is what the panel's template needs.
type rolloutPanel struct {
	AgentID   string
	AgentName string
	CSRF      string
	CanWrite  bool
	Live      int // the published version; 0 when none
	Variables []usedVariable
	Rollout   map[string]any // nil when none stands
	Variants  []variantRow
	Versions  []int // the page of published versions shown, and those the form holds, newest first
	// Newer and Older are the cursors of the pages of versions beside the one shown,
	// walked by the form's Newer/More versions buttons as a picker's (pickers.go).
	Newer, Older string
	Metrics      []string
	Err          *apiError
	// Form is the refused form as it was sent, shown again as typed; nil otherwise.
	Form url.Values
}

// agentRolloutPanel serves GET /agents/{id}/rollout-panel: the panel alone.
func (h *Handler) agentRolloutPanel(w http.ResponseWriter, r *http.Request) {
	d, err := h.rolloutPanelData(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.renderPart(w, r, "rollout", "panel", d)
}

// agentRolloutPage serves GET /agents/{id}/rollout: the panel as a page.
func (h *Handler) agentRolloutPage(w http.ResponseWriter, r *http.Request) {
	if q := r.URL.Query(); q.Has(rolloutMore) {
		// The form's More or Newer versions button: the form as typed, another page of
		// versions.
		h.renderRolloutForm(w, r, nil, q)
		return
	}
	h.renderRollout(w, r, http.StatusOK, nil)
}

// rolloutMore is the rollout form's parameter holding the cursor of the page of versions
// shown, named as a picker's (morePrefix).
const rolloutMore = morePrefix + "versions"

func (h *Handler) renderRollout(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	h.renderRolloutForm(w, r, fail, nil)
}

// renderRolloutForm is renderRollout with the refused form shown again as typed.
func (h *Handler) renderRolloutForm(w http.ResponseWriter, r *http.Request, fail *apiError, form url.Values) {
	d, err := h.rolloutPanelData(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d.Err, d.Form = fail, form
	d.keepTyped(form)
	status := http.StatusOK
	if fail != nil {
		status = fail.Status
	}
	h.render(w, r, status, "rollout", &view{Title: d.AgentName + " · variables and rollout", Active: "agents", Err: fail, D: d})
}

func (h *Handler) rolloutPanelData(r *http.Request) (*rolloutPanel, error) {
	id := r.PathValue("id")
	base := "/api/v1/agents/" + url.PathEscape(id)
	res, err := h.call(r, "GET", base, nil, nil)
	if err != nil {
		return nil, err
	}
	a := res.Data()
	p := data.PrincipalFrom(r.Context())
	d := &rolloutPanel{AgentID: id, AgentName: str(a["name"]), CSRF: CSRFToken(SessionToken(r)), CanWrite: p.Allows(data.Write(data.ModuleAgents)) == nil,
		Metrics: data.RolloutMetrics}
	if v, ok := a["published_version"].(float64); ok {
		d.Live = int(v)
	}
	defaults, _ := lookup(a, "prompt_config.default_variables").(map[string]any)
	for _, name := range strs(a["used_variables"]) {
		src := "needs a value from the number or the call"
		switch v, ok := defaults[name]; {
		case slices.Contains(conversation.BuiltInVariables, name):
			src = "built-in"
		case ok:
			s, _ := conversation.FormatValue(v)
			src = "default: " + s
		}
		d.Variables = append(d.Variables, usedVariable{Name: name, Source: src})
	}
	if ro, err := h.call(r, "GET", base+"/rollout", nil, nil); err == nil {
		d.Rollout = ro.Data()
		d.Variants = variantRows(d.Rollout)
	} else if e := err.(*apiError); e.Status != http.StatusNotFound {
		return nil, err
	}
	vs, err := h.call(r, "GET", base+"/versions", pageQuery(pickPage, r.URL.Query().Get(rolloutMore)), nil)
	if e, stale := err.(*apiError); stale && e.Status == http.StatusUnprocessableEntity {
		vs, err = h.call(r, "GET", base+"/versions", pageQuery(pickPage, ""), nil) // a cursor edited by hand: the first page
	}
	if err != nil {
		return nil, err
	}
	d.Newer, d.Older = vs.PrevCursor(), vs.NextCursor()
	for _, v := range vs.List() {
		if n, ok := lookup(v, "version_number").(float64); ok {
			d.Versions = append(d.Versions, int(n))
		}
	}
	// A variant not on the page of versions shown keeps its field: a save sends every
	// weight, and one not sent would drop the variant.
	for _, row := range d.Variants {
		d.addVersion(row.Version)
	}
	return d, nil
}

// addVersion adds a field for version n, the fields kept newest first.
func (d *rolloutPanel) addVersion(n int) {
	if !slices.Contains(d.Versions, n) {
		d.Versions = append(d.Versions, n)
	}
	slices.SortFunc(d.Versions, func(a, b int) int { return b - a })
}

// keepTyped adds a field for each version given a weight in form (typed on another page
// of versions, or sent and refused), so that neither a round-trip nor a save loses it.
func (d *rolloutPanel) keepTyped(form url.Values) {
	for key, vals := range form {
		v, ok := strings.CutPrefix(key, "weight_")
		if n, err := strconv.Atoi(v); ok && err == nil && n > 0 && len(vals) > 0 && strings.TrimSpace(vals[0]) != "" {
			d.addVersion(n)
		}
	}
}

func variantRows(ro map[string]any) []variantRow {
	var out []variantRow
	list, _ := ro["variants"].([]any)
	for _, item := range list {
		v, _ := item.(map[string]any)
		row := variantRow{Version: int(num(v["version"])), Weight: int(num(v["weight"])),
			Calls: int64(num(v["calls"])), Failed: int64(num(v["failed"])),
			Analyzed: int64(num(v["analyzed"])), Successful: int64(num(v["successful"])),
			RolledBack: v["rolled_back"] == true, FailedRate: "—", SuccessRate: "—"}
		if row.Calls > 0 {
			row.FailedRate = share(row.Failed, row.Calls)
		}
		if row.Analyzed > 0 {
			row.SuccessRate = share(row.Successful, row.Analyzed)
		}
		out = append(out, row)
	}
	return out
}

// agentRolloutSet serves POST /agents/{id}/rollout: weight_<version> fields (a blank one
// leaves the version out) and, when metric is chosen, the rollback's threshold (a
// percentage) and min_calls.
func (h *Handler) agentRolloutSet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var variants []any
	for key, vals := range r.PostForm {
		v, ok := strings.CutPrefix(key, "weight_")
		if !ok || strings.TrimSpace(vals[0]) == "" {
			continue
		}
		version, _ := strconv.Atoi(v)
		variants = append(variants, map[string]any{"version": version, "weight": formNumber(vals[0])})
	}
	slices.SortFunc(variants, func(a, b any) int {
		return a.(map[string]any)["version"].(int) - b.(map[string]any)["version"].(int)
	})
	// A version typed by its number (one on no page shown), last: the API refuses one the
	// agent does not hold, its fault shown beside that field.
	if other := strings.TrimSpace(r.PostFormValue("other_version")); other != "" {
		variants = append(variants, map[string]any{"version": formNumber(other), "weight": formNumber(r.PostFormValue("other_weight")), "other": true})
	}
	body := map[string]any{"variants": sentVariants(variants)}
	if m := r.PostFormValue("metric"); m != "" {
		threshold := formNumber(r.PostFormValue("threshold"))
		if f, ok := threshold.(float64); ok {
			threshold = f / 100
		}
		body["rollback"] = map[string]any{"metric": m, "threshold": threshold, "min_calls": formNumber(r.PostFormValue("min_calls"))}
	}
	if _, err := h.call(r, "PUT", "/api/v1/agents/"+url.PathEscape(id)+"/rollout", nil, body); err != nil {
		h.renderRolloutForm(w, r, rolloutFormError(err.(*apiError), variants), r.PostForm)
		return
	}
	http.Redirect(w, r, "/agents/"+url.PathEscape(id)+"#rollout", http.StatusSeeOther)
}

// sentVariants is variants as the API takes them, without the form's own marks.
func sentVariants(variants []any) []any {
	out := []any{}
	for _, v := range variants {
		m := v.(map[string]any)
		out = append(out, map[string]any{"version": m["version"], "weight": m["weight"]})
	}
	return out
}

// rolloutLabels name the rollout form's fields as its labels do.
var rolloutLabels = fieldLabels{"variants": "The weights", "rollback.metric": "Metric", "rollback.threshold": "Threshold",
	"rollback.min_calls": "Minimum calls per variant"}

// rolloutFormError is e relabeled for the form, with the faults of the variant sent at
// index i (variants.<i>.weight) moved to that version's field (weight_<version>).
func rolloutFormError(e *apiError, variants []any) *apiError {
	e = relabel(e, rolloutLabels)
	if e == nil || len(e.Errors) == 0 {
		return e
	}
	out := *e
	out.Errors = map[string][]string{}
	for path, msgs := range e.Errors {
		if rest, ok := strings.CutPrefix(path, "variants."); ok {
			i, _, _ := strings.Cut(rest, ".")
			if n, err := strconv.Atoi(i); err == nil && n < len(variants) {
				v := variants[n].(map[string]any)
				if v["other"] == true {
					path = "other_version"
				} else {
					path = "weight_" + strconv.Itoa(v["version"].(int))
				}
			}
		}
		out.Errors[path] = append(out.Errors[path], msgs...)
	}
	return &out
}

// formNumber is a form field as a JSON number when it reads as one, else as the text
// given, which the API refuses naming the field.
func formNumber(s string) any {
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		return f
	}
	return s
}

// agentRolloutEnd serves POST /agents/{id}/rollout/end.
func (h *Handler) agentRolloutEnd(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := h.call(r, "DELETE", "/api/v1/agents/"+url.PathEscape(id)+"/rollout", nil, nil); err != nil {
		h.renderRollout(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	http.Redirect(w, r, "/agents/"+url.PathEscape(id)+"#rollout", http.StatusSeeOther)
}
