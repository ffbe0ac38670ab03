package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// The workspace's privacy settings (docs/calls.md, "Privacy settings"): how long calls and
// uploaded files are kept, and what is redacted from call text. Owners and admins change
// them; the page shows them to every member.

func (h *Handler) privacyRoutes() {
	h.mux.HandleFunc("GET /workspace/privacy", h.page(h.privacyPage))
	h.mux.HandleFunc("POST /workspace/privacy", h.action(h.privacySave))
}

// privacyLabels are the privacy form's labels, for the API's messages.
var privacyLabels = fieldLabels{
	"privacy.retention_days":            "Keep calls for (days)",
	"privacy.knowledge_retention_days":  "Keep uploaded files for (days)",
	"privacy.redaction.detectors":       "Detectors",
	"privacy.redaction.detectors.#":     "Detector #",
	"privacy.redaction.rules":           "Rules",
	"privacy.redaction.rules.#.name":    "Rule # name",
	"privacy.redaction.rules.#.pattern": "Rule # pattern",
}

// blankRules is how many empty rule rows the form offers for new rules.
const blankRules = 2

func (h *Handler) privacyPage(w http.ResponseWriter, r *http.Request) {
	h.renderPrivacy(w, r, http.StatusOK, nil, nil)
}

// renderPrivacy shows the settings; after a refusal, what was typed (typed) instead of
// what is stored.
func (h *Handler) renderPrivacy(w http.ResponseWriter, r *http.Request, status int, fail *apiError, typed map[string]any) {
	res, err := h.call(r, "GET", h.wsPath(r), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ws := res.Data()
	priv, _ := ws["privacy"].(map[string]any)
	if typed != nil {
		priv = typed
	}
	rules := asList(lookup(priv, "redaction.rules"))
	for range blankRules {
		rules = append(rules, map[string]any{})
	}
	h.render(w, r, status, "privacy", &view{Title: "Privacy", Active: "workspace", Err: relabel(fail, privacyLabels), D: map[string]any{
		"WS": ws, "ETag": res.ETag, "P": priv, "Rules": rules, "Detectors": validate.RedactionDetectors,
		"On": strs(lookup(priv, "redaction.detectors")), "Min": validate.MinRetentionDays, "Max": validate.MaxRetentionDays,
		// Saving is PUT /api/v1/workspaces/{id}: the API's rule, which reads a key's scopes.
		"CanSave": data.PrincipalFrom(r.Context()).Allows(data.NeedWorkspaceAdmin()) == nil,
	}})
}

// days reads a retention field: empty keeps forever (null); what is not a number goes
// to the API as typed, for it to name.
func days(s string) any {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return s
}

func (h *Handler) privacySave(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	detectors := []any{}
	for _, d := range r.PostForm["detectors"] {
		detectors = append(detectors, d)
	}
	rules := []any{}
	names, patterns := r.PostForm["rule_name"], r.PostForm["rule_pattern"]
	for i := range names {
		if i < len(patterns) && (strings.TrimSpace(names[i]) != "" || patterns[i] != "") {
			rules = append(rules, map[string]any{"name": strings.TrimSpace(names[i]), "pattern": patterns[i]})
		}
	}
	redaction := map[string]any{"detectors": detectors, "rules": rules}
	priv := map[string]any{"retention_days": days(r.PostFormValue("retention_days")),
		"knowledge_retention_days": days(r.PostFormValue("knowledge_retention_days")), "redaction": redaction}
	if _, err := h.callIfMatch(r, "PUT", h.wsPath(r), r.PostFormValue("etag"), map[string]any{"privacy": priv}); err != nil {
		// The form again with what was typed, so that a fault is fixed, not retyped.
		typed := map[string]any{"retention_days": r.PostFormValue("retention_days"),
			"knowledge_retention_days": r.PostFormValue("knowledge_retention_days"), "redaction": redaction}
		h.renderPrivacy(w, r, err.(*apiError).Status, err.(*apiError), typed)
		return
	}
	h.done(w, r, "/workspace/privacy", flash{Notice: "Privacy settings saved. They apply to calls from now on."})
}
