package console

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// Campaigns (docs/campaigns.md): the list with each campaign's progress, a form that
// uploads a CSV, and a campaign's page with its counts, pause, resume and cancel, and
// delete once it is finished.
func (h *Handler) campaignRoutes() {
	m := h.mux
	m.HandleFunc("GET /campaigns", h.page(h.campaignList))
	m.HandleFunc("POST /campaigns", h.campaignCreate) // multipart: its CSRF field is checked here
	m.HandleFunc("GET /campaigns/{id}", h.page(h.campaignShow))
	m.HandleFunc("GET /campaigns/{id}/progress", h.page(h.campaignProgress))
	m.HandleFunc("POST /campaigns/{id}/pause", h.action(h.campaignMove("pause", "Campaign paused.")))
	m.HandleFunc("POST /campaigns/{id}/resume", h.action(h.campaignMove("resume", "Campaign resumed.")))
	m.HandleFunc("GET /campaigns/{id}/cancel", h.page(h.campaignCancelConfirm))
	m.HandleFunc("POST /campaigns/{id}/cancel", h.action(h.campaignMove("cancel", "Campaign canceled.")))
	m.HandleFunc("GET /campaigns/{id}/delete", h.page(h.campaignDeleteConfirm))
	m.HandleFunc("POST /campaigns/{id}/delete", h.action(h.campaignDelete))
}

// campaignLabels are the create form's labels, for the API's messages.
var campaignLabels = fieldLabels{"name": "Name", "agent_id": "Agent", "number_id": "Calling number", "timezone": "Time zone",
	"window.days": "Days", "window.start": "Opens at", "window.end": "Closes at", "max_concurrent": "Calls at once",
	"retry.max_attempts": "Attempts", "retry.backoff_minutes": "Minutes between attempts", "file": "CSV file"}

func (h *Handler) campaignList(w http.ResponseWriter, r *http.Request) {
	h.renderCampaigns(w, r, http.StatusOK, nil, nil)
}

func (h *Handler) renderCampaigns(w http.ResponseWriter, r *http.Request, status int, fail *apiError, form url.Values) {
	res, err := h.call(r, "GET", "/api/v1/campaigns", pageQuery(perPage, r.URL.Query().Get("cursor")), nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	picks := picking(r.URL.Query())
	if form == nil && picks && r.URL.Query().Has("name") {
		form = r.URL.Query() // a picker's round-trip: the form as it was typed
	}
	if form == nil {
		form = url.Values{"days": {"mon", "tue", "wed", "thu", "fri"}, "start": {"09:00"}, "end": {"18:00"}, "max_concurrent": {"5"},
			"retry_on": {"no_answer", "busy"}, "max_attempts": {"3"}, "backoff_minutes": {"60"}, "timezone": {"UTC"}}
	}
	p := data.PrincipalFrom(r.Context())
	agents := h.agentPicker(r, "agent_id", form.Get("agent_id"))
	list := res.List()
	h.render(w, r, status, "campaigns", &view{Title: "Campaigns", Active: "campaigns", Err: relabel(fail, campaignLabels), D: map[string]any{
		"Campaigns": list, "Pages": pagerOf(r, "cursor", res), "AgentPick": agents, "NumberPick": h.numberPicker(r, "number_id", true, form.Get("number_id")),
		"Picking": picks, "AgentNames": h.agentNames(r, agents.records, listIDs(list, "agent_id")...), "Form": form,
		"Days": data.Weekdays, "Outcomes": data.RetryOutcomes,
		"CanWrite": p.Allows(data.Write(data.ModuleCallHistory)) == nil,
	}})
}

// maxCampaignForm bounds the form the console reads: the API's own file limit is checked
// by the API.
const maxCampaignForm = 64 << 20

// readUploadForm reads a multipart form of a signed-in user (a CSV upload) and checks its
// CSRF field, which only parsing reaches; it refuses and reports false otherwise. The
// caller removes the form's files when done.
func readUploadForm(w http.ResponseWriter, r *http.Request) bool {
	tok := SessionToken(r)
	if tok == "" || data.PrincipalFrom(r.Context()) == nil {
		refuse(w, http.StatusUnauthorized, data.EUNAUTHORIZED, "Sign in first.")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxCampaignForm)
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		refuse(w, http.StatusRequestEntityTooLarge, data.ETOOLARGE, "The form cannot be read, or is larger than 64 MiB.")
		return false
	}
	if !validFieldCSRF(r.FormValue(csrfField), tok) {
		r.MultipartForm.RemoveAll()
		refuse(w, http.StatusForbidden, data.EFORBIDDEN, "The form's CSRF token is missing or wrong; reload the page and try again.")
		return false
	}
	return true
}

// campaignCreate sends the form's settings and CSV file to the API as one multipart
// request. The form is multipart, so its CSRF field is checked here, after parsing.
func (h *Handler) campaignCreate(w http.ResponseWriter, r *http.Request) {
	if !readUploadForm(w, r) {
		return
	}
	defer r.MultipartForm.RemoveAll()
	form := url.Values(r.MultipartForm.Value)
	body, ctype, err := campaignUpload(form, r.MultipartForm.File["file"])
	if err != nil {
		h.renderCampaigns(w, r, http.StatusUnprocessableEntity, &apiError{Status: 422, Code: data.EINVALID, Message: err.Error()}, form)
		return
	}
	res, err := h.send(r, apiCall{Method: "POST", Path: "/api/v1/campaigns", Raw: body, ContentType: ctype,
		IdempotencyKey: form.Get(idempotencyField)})
	if err != nil {
		h.renderCampaigns(w, r, err.(*apiError).Status, err.(*apiError), form)
		return
	}
	d := res.Data()
	imp, _ := d["import"].(map[string]any)
	notice := "Campaign " + str(d["name"]) + " created with " + plural(member(d["counts"], "total"), "recipient", "recipients") + "."
	if n := member(imp, "suppressed"); n > 0 {
		notice += " " + plural(n, "number was", "numbers were") + " on the suppression list and skipped."
	}
	h.done(w, r, "/campaigns/"+url.PathEscape(str(d["id"])), flash{Notice: notice})
}

// campaignTally counts a campaign's recipients settled (done) of all, the numbers skipped
// at import included, from the API's campaign record: the one sum behind its page's bar
// and its list's row.
type campaignTally struct{ Done, All float64 }

// Share is Done of All as share shows it, "" for a campaign of no recipient.
func (t campaignTally) Share() string {
	if t.All <= 0 {
		return ""
	}
	return share(int64(t.Done), int64(t.All))
}

// tally reads counts.total and import.suppressed, not counts.suppressed: that one also
// holds the recipients found suppressed when their turn came, who are in the total
// already, and were counted twice.
func tally(campaign any) campaignTally {
	c, _ := campaign.(map[string]any)
	counts := c["counts"]
	all := member(counts, "total") + member(c["import"], "suppressed")
	return campaignTally{Done: all - member(counts, "pending") - member(counts, "in_progress"), All: all}
}

// member reads a number member of a map.
func member(m any, key string) float64 {
	mm, _ := m.(map[string]any)
	f, _ := mm[key].(float64)
	return f
}

// campaignUpload builds the API's multipart body: the settings as the campaign part, the
// uploaded file as the file part.
func campaignUpload(form url.Values, files []*multipart.FileHeader) (io.Reader, string, error) {
	settings := map[string]any{
		"name": form.Get("name"), "agent_id": form.Get("agent_id"), "number_id": form.Get("number_id"),
		"window":         map[string]any{"days": nonNil(form["days"]), "start": form.Get("start"), "end": form.Get("end")},
		"max_concurrent": formInt(form.Get("max_concurrent")),
		"retry": map[string]any{"on": nonNil(form["retry_on"]), "max_attempts": formInt(form.Get("max_attempts")),
			"backoff_minutes": formInt(form.Get("backoff_minutes"))},
	}
	if tz := strings.TrimSpace(form.Get("timezone")); tz != "" {
		settings["timezone"] = tz
	}
	js, err := json.Marshal(settings)
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	pw, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Disposition": {`form-data; name="campaign"`}, "Content-Type": {"application/json"}})
	pw.Write(js)
	if len(files) > 0 {
		f, err := files[0].Open()
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		fw, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Disposition": {`form-data; name="file"; filename="recipients.csv"`}, "Content-Type": {"text/csv"}})
		if _, err := io.Copy(fw, f); err != nil {
			return nil, "", err
		}
	}
	mw.Close()
	return &buf, mw.FormDataContentType(), nil
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// formInt is a number field's value: the number, or the text as typed (the API names it).
func formInt(s string) any {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return n
	}
	return s
}

// campaignView is a campaign's page: the record, its progress and its recipients.
type campaignView struct {
	C          map[string]any
	Recipients []any
	Pages      pager
	Done, All  float64 // recipients settled, of all (the numbers skipped at import included)
	Share      string  // Done of All as share shows it; "" when there are none
	Open       bool    // still dialing or waiting: the page refreshes its progress
	// Finished is a campaign done with for good (data.CampaignFinished): it may be deleted.
	Finished bool
	// PauseHelp says why a campaign that paused itself did, and what fixes it.
	PauseHelp  string
	AgentNames names
	CanWrite   bool
	// NumberLink: the user may open the number the campaign calls from.
	NumberLink bool
	// State is the recipients' state filter (the API's state), States its choices;
	// StateErr is the API's 422 on it or the cursor, shown by the form (a hand-edited or
	// stale address).
	State    string
	States   []string
	StateErr *apiError
}

func (h *Handler) loadCampaign(r *http.Request) (*campaignView, error) {
	id := url.PathEscape(r.PathValue("id"))
	res, err := h.call(r, "GET", "/api/v1/campaigns/"+id, nil, nil)
	if err != nil {
		return nil, err
	}
	v := progressOf(res.Data())
	in := r.URL.Query()
	q := filterQuery(in, "state")
	maps.Copy(q, pageQuery(perPage, in.Get("cursor")))
	v.State, v.States = in.Get("state"), data.RecipientStates
	rs, err := h.call(r, "GET", "/api/v1/campaigns/"+id+"/recipients", q, nil)
	switch fail, _ := err.(*apiError); {
	case fail != nil && fail.Status == http.StatusUnprocessableEntity:
		v.StateErr = relabel(fail, fieldLabels{"state": "State", "cursor": "Page"})
	case err != nil:
		return nil, err
	default:
		v.Recipients, v.Pages = rs.List(), pagerOf(r, "cursor", rs)
	}
	v.AgentNames = h.agentNames(r, nil, str(v.C["agent_id"]))
	p := data.PrincipalFrom(r.Context())
	v.CanWrite = p.Allows(data.Write(data.ModuleCallHistory)) == nil
	v.NumberLink = str(v.C["number_id"]) != "" && p.Allows(data.Read(data.ModulePhoneNumbers)) == nil
	return v, nil
}

// progressOf is what the progress panel shows of campaign c, from the record alone: the
// panel, polled every 2 s while the campaign is open, asks the API for nothing else.
func progressOf(c map[string]any) *campaignView {
	counts, _ := c["counts"].(map[string]any)
	v := &campaignView{C: c}
	t := tally(c)
	v.Done, v.All = t.Done, t.All
	v.Share = t.Share()
	if reason := str(c["pause_reason"]); reason != "" {
		v.PauseHelp = data.CampaignPauseHelp[reason]
	}
	st := str(c["status"])
	v.Open = st == data.CampaignScheduled || st == data.CampaignRunning || st == data.CampaignPaused
	v.Finished = data.CampaignFinished(&data.Campaign{Status: st, Counts: data.CampaignCounts{InProgress: int64(member(counts, "in_progress"))}})
	return v
}

func (h *Handler) campaignShow(w http.ResponseWriter, r *http.Request) {
	v, err := h.loadCampaign(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "campaign", &view{Title: str(v.C["name"]), Active: "campaigns", D: v})
}

// campaignProgress is the progress panel alone, which the page polls while the campaign
// is open: one read of the campaign (not its recipients, nor its agent's name).
func (h *Handler) campaignProgress(w http.ResponseWriter, r *http.Request) {
	res, err := h.call(r, "GET", "/api/v1/campaigns/"+url.PathEscape(r.PathValue("id")), nil, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.renderPart(w, r, "campaign", "progress", progressOf(res.Data()))
}

// campaignMove pauses, resumes or cancels the campaign.
func (h *Handler) campaignMove(verb, notice string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := url.PathEscape(r.PathValue("id"))
		if _, err := h.call(r, "POST", "/api/v1/campaigns/"+id+"/"+verb, nil, nil); err != nil {
			h.fail(w, r, err)
			return
		}
		h.done(w, r, "/campaigns/"+id, flash{Notice: notice})
	}
}

// campaignCancelConfirm says what a cancel stops and what it keeps.
func (h *Handler) campaignCancelConfirm(w http.ResponseWriter, r *http.Request) {
	v, err := h.loadCampaign(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	counts, _ := v.C["counts"].(map[string]any)
	h.confirmPage(w, r, "campaigns", confirmation{
		Title: "Cancel the campaign " + str(v.C["name"]) + "?", Need: needOf(data.Write(data.ModuleCallHistory)),
		Lost: []string{plural(member(counts, "pending"), "recipient waiting to be called is", "recipients waiting to be called are") + " never called."},
		Kept: []string{"Calls in progress run on and are recorded (without retries).",
			"The campaign, its recipients and their calls."},
		Button: "Cancel campaign", Cancel: "/campaigns/" + url.PathEscape(str(v.C["id"])), Crumb: "Campaigns", CrumbHref: "/campaigns",
	}, http.StatusOK, nil)
}

// campaignDeleteConfirm says what a delete takes (the recipients' numbers and variables)
// and what it keeps (the calls).
func (h *Handler) campaignDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	v, err := h.loadCampaign(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	counts, _ := v.C["counts"].(map[string]any)
	h.confirmPage(w, r, "campaigns", confirmation{
		Title: "Delete the campaign " + str(v.C["name"]) + "?", Need: needOf(data.Write(data.ModuleCallHistory)),
		Lost: []string{"The campaign and its " + plural(member(counts, "total"), "recipient", "recipients") +
			", with their numbers, variables and attempts."},
		Kept:   []string{"The calls it made, in the call history."},
		Button: "Delete campaign", Cancel: "/campaigns/" + url.PathEscape(str(v.C["id"])), Crumb: "Campaigns", CrumbHref: "/campaigns",
	}, http.StatusOK, nil)
}

func (h *Handler) campaignDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/campaigns/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/campaigns", flash{Notice: "Campaign deleted."})
}
