package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

func (h *Handler) numberRoutes() {
	m := h.mux
	m.HandleFunc("GET /numbers", h.page(h.numberList))
	m.HandleFunc("POST /numbers", h.action(h.numberCreate))
	m.HandleFunc("GET /numbers/{id}", h.page(h.numberEdit))
	m.HandleFunc("POST /numbers/{id}", h.action(h.numberUpdate))
	m.HandleFunc("GET /numbers/{id}/delete", h.page(h.numberDeleteConfirm))
	m.HandleFunc("POST /numbers/{id}/delete", h.action(h.numberDelete))
}

func (h *Handler) numberList(w http.ResponseWriter, r *http.Request) {
	h.renderNumbers(w, r, http.StatusOK, nil)
}

func (h *Handler) renderNumbers(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	in := r.URL.Query()
	q := pageQuery(perPage, in.Get("cursor"))
	if v := in.Get("agent_id"); v != "" {
		q.Set("agent_id", v)
	}
	res, err := h.call(r, "GET", "/api/v1/numbers", q, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := data.PrincipalFrom(r.Context())
	form, picks := r.PostForm, picking(in)
	if picks {
		form = in // a picker's round-trip: the form as it was typed
	}
	inbound := h.agentPicker(r, "inbound_agent_id", form.Get("inbound_agent_id"))
	h.render(w, r, status, "numbers", &view{Title: "Numbers", Active: "numbers", Err: relabel(fail, numberLabels), D: map[string]any{
		"Numbers": res.List(), "Pages": pagerOf(r, "cursor", res), "AgentID": in.Get("agent_id"),
		"InboundPick": inbound, "OutboundPick": h.agentPickerBeside(r, inbound, "outbound_agent_id", form.Get("outbound_agent_id")),
		"AgentNames": h.agentNames(r, inbound.records, listIDs(res.List(), "inbound_agent_id", "outbound_agent_id")...),
		"Providers":  data.NumberProviders, "Form": form, "Picking": picks,
		"CanWrite": p.Allows(data.Write(data.ModulePhoneNumbers)) == nil,
	}})
}

// optID is a picker's value for a nullable id: "" is null (unbound).
func optID(s string) any {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return s
}

func (h *Handler) numberCreate(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{
		"phone_number": r.PostFormValue("phone_number"), "nickname": r.PostFormValue("nickname"),
		"provider": r.PostFormValue("provider"), "inbound_agent_id": optID(r.PostFormValue("inbound_agent_id")),
		"outbound_agent_id": optID(r.PostFormValue("outbound_agent_id")),
	}
	if _, err := h.create(r, "/api/v1/numbers", body); err != nil {
		h.renderNumbers(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	h.done(w, r, "/numbers", flash{Notice: "Number " + str(body["phone_number"]) + " added."})
}

// numberLabels are the number forms' labels, for the API's messages.
var numberLabels = fieldLabels{"phone_number": "Phone number", "nickname": "Nickname", "provider": "Provider",
	"inbound_agent_id": "Inbound agent", "outbound_agent_id": "Outbound agent", "variables": "Variables"}

func (h *Handler) numberEdit(w http.ResponseWriter, r *http.Request) {
	h.renderNumber(w, r, http.StatusOK, nil)
}

func (h *Handler) renderNumber(w http.ResponseWriter, r *http.Request, status int, fail *apiError) {
	res, err := h.call(r, "GET", "/api/v1/numbers/"+url.PathEscape(r.PathValue("id")), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := data.PrincipalFrom(r.Context())
	n := res.Data()
	// A number that routes calls of an agent the user does not see, or that an open
	// campaign of such an agent dials from, is not theirs to change: the API's access says
	// so (service fillNumberAccess), the page offers nothing and says why.
	writable := canWrite(res)
	// The form shows what was typed when it comes back: refused, or from a picker's
	// round-trip, whose etag is still the one the values were typed against.
	var form url.Values
	if r.Method == http.MethodPost {
		form = r.PostForm
	} else if q := r.URL.Query(); picking(q) && q.Has("etag") { // the form as sent, not an address edited by hand
		form = q
	}
	etag, in, out := res.ETag, str(n["inbound_agent_id"]), str(n["outbound_agent_id"])
	if form != nil {
		etag, in, out = form.Get("etag"), form.Get("inbound_agent_id"), form.Get("outbound_agent_id")
	}
	inbound := h.agentPicker(r, "inbound_agent_id", in)
	h.render(w, r, status, "number", &view{Title: str(n["phone_number"]), Active: "numbers", Err: relabel(fail, numberLabels), D: map[string]any{
		"N": n, "ETag": etag, "Form": form, "Providers": data.NumberProviders,
		"InboundPick": inbound, "OutboundPick": h.agentPickerBeside(r, inbound, "outbound_agent_id", out),
		"CanWrite":    writable,
		"OthersAgent": !writable && len(p.AgentIDs) > 0 && p.Allows(data.Write(data.ModulePhoneNumbers)) == nil,
	}})
}

func (h *Handler) numberUpdate(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	body := map[string]any{
		"nickname": r.PostFormValue("nickname"), "provider": r.PostFormValue("provider"),
		"inbound_agent_id": optID(r.PostFormValue("inbound_agent_id")), "outbound_agent_id": optID(r.PostFormValue("outbound_agent_id")),
	}
	if v, given := r.PostForm["variables"]; given {
		body["variables"] = formObject(v[0])
	}
	if _, err := h.callIfMatch(r, "PUT", "/api/v1/numbers/"+url.PathEscape(id), r.PostFormValue("etag"), body); err != nil {
		h.renderNumber(w, r, err.(*apiError).Status, err.(*apiError))
		return
	}
	h.done(w, r, "/numbers", flash{Notice: "Number saved."})
}

// numberDeleteConfirm names the number and the agents that stop answering it.
func (h *Handler) numberDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "GET", "/api/v1/numbers/"+url.PathEscape(r.PathValue("id")), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if h.refusedByAccess(w, r, data.Write(data.ModulePhoneNumbers), canWrite(res), data.NumberOfHiddenAgent) {
		return
	}
	n := res.Data()
	agents := h.agentNames(r, nil, listIDs([]any{n}, "inbound_agent_id", "outbound_agent_id")...)
	lost := []string{"Its settings: nickname, provider and agents."}
	if id := str(n["inbound_agent_id"]); id != "" {
		lost = append(lost, "Calls to "+str(n["phone_number"])+" are no longer answered by "+agents.Of(id)+".")
	}
	if id := str(n["outbound_agent_id"]); id != "" {
		lost = append(lost, agents.Of(id)+" no longer calls out from this number.")
	}
	h.confirmPage(w, r, "numbers", confirmation{
		Title: "Delete the number " + numberLabel(n) + "?", Lost: lost, Need: needOf(data.Write(data.ModulePhoneNumbers)),
		Kept:   []string{"The history of its calls.", "The number at your telephony provider: only voiceapi forgets it."},
		Button: "Delete number", Cancel: "/numbers/" + url.PathEscape(str(n["id"])), Crumb: "Numbers", CrumbHref: "/numbers",
	}, http.StatusOK, nil)
}

func (h *Handler) numberDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/numbers/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/numbers", flash{Notice: "Number deleted."})
}

// formObject is a form field holding a JSON object: the object, {} when blank, or the text
// as given when it is not JSON (the API refuses it naming the field).
func formObject(s string) any {
	if strings.TrimSpace(s) == "" {
		return map[string]any{}
	}
	var v any
	if data.DecodeJSON([]byte(s), &v) != nil { // numbers kept as written
		return s
	}
	return v
}
