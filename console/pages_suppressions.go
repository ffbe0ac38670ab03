package console

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"

	"github.com/voiceapi/voiceapi/data"
)

// The suppression list (docs/campaigns.md): the numbers no campaign calls, a form that
// adds one, a CSV upload, and removal through the confirmation page.
func (h *Handler) suppressionRoutes() {
	m := h.mux
	m.HandleFunc("GET /suppressions", h.page(h.suppressionList))
	m.HandleFunc("POST /suppressions", h.action(h.suppressionAdd))
	m.HandleFunc("POST /suppressions/import", h.suppressionImport) // multipart: its CSRF field is checked here
	m.HandleFunc("GET /suppressions/{id}/delete", h.page(h.suppressionDeleteConfirm))
	m.HandleFunc("POST /suppressions/{id}/delete", h.action(h.suppressionDelete))
}

// suppressionLabels are the forms' labels, for the API's messages.
var suppressionLabels = fieldLabels{"phone_number": "Phone number", "reason": "Reason", "file": "CSV file"}

func (h *Handler) suppressionList(w http.ResponseWriter, r *http.Request) {
	h.renderSuppressions(w, r, http.StatusOK, nil, nil, "")
}

// renderSuppressions shows the list; fail and form carry a refused form (which says
// which of the two forms was refused: "add" or "import").
func (h *Handler) renderSuppressions(w http.ResponseWriter, r *http.Request, status int, fail *apiError, form url.Values, which string) {
	q := pageQuery(perPage, r.URL.Query().Get("cursor"))
	res, err := h.call(r, "GET", "/api/v1/suppressions", q, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if form == nil {
		form = url.Values{}
	}
	p := data.PrincipalFrom(r.Context())
	canWrite := p.Allows(data.Write(data.ModuleCallHistory)) == nil
	h.render(w, r, status, "suppressions", &view{Title: "Suppression list", Active: "campaigns", Err: relabel(fail, suppressionLabels), D: map[string]any{
		"Entries": res.List(), "Pages": pagerOf(r, "cursor", res), "Form": form, "Which": which,
		"CanWrite": canWrite,
		// The API's rule: a member limited to some agents may add but not remove.
		"CanRemove": p.Allows(data.NeedSuppressionRemove()) == nil,
	}})
}

func (h *Handler) suppressionAdd(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"phone_number": r.PostFormValue("phone_number")}
	if reason := r.PostFormValue("reason"); reason != "" {
		body["reason"] = reason
	}
	res, err := h.create(r, "/api/v1/suppressions", body)
	if err != nil {
		h.renderSuppressions(w, r, err.(*apiError).Status, err.(*apiError), r.PostForm, "add")
		return
	}
	notice := str(res.Data()["phone_number"]) + " added to the suppression list."
	if res.Status == http.StatusOK {
		notice = str(res.Data()["phone_number"]) + " was on the suppression list already."
	}
	h.done(w, r, "/suppressions", flash{Notice: notice})
}

// suppressionImport sends the uploaded CSV to the API as a multipart file part. The form
// is multipart, so its CSRF field is checked here, after parsing.
func (h *Handler) suppressionImport(w http.ResponseWriter, r *http.Request) {
	if !readUploadForm(w, r) {
		return
	}
	defer r.MultipartForm.RemoveAll()
	form := url.Values(r.MultipartForm.Value)
	body, ctype, err := suppressionUpload(r.MultipartForm.File["file"])
	if err != nil {
		h.renderSuppressions(w, r, http.StatusUnprocessableEntity, &apiError{Status: 422, Code: data.EINVALID, Message: err.Error()}, form, "import")
		return
	}
	res, err := h.send(r, apiCall{Method: "POST", Path: "/api/v1/suppressions/import", Raw: body, ContentType: ctype,
		IdempotencyKey: form.Get(idempotencyField)})
	if err != nil {
		h.renderSuppressions(w, r, err.(*apiError).Status, err.(*apiError), form, "import")
		return
	}
	d := res.Data()
	notice := plural(member(d, "added"), "number", "numbers") + " added to the suppression list."
	if n := member(d, "duplicates"); n > 0 {
		notice += " " + plural(n, "row was", "rows were") + " listed already."
	}
	h.done(w, r, "/suppressions", flash{Notice: notice})
}

// suppressionUpload builds the API's multipart body: the uploaded file as its file part.
func suppressionUpload(files []*multipart.FileHeader) (io.Reader, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if len(files) > 0 {
		f, err := files[0].Open()
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		fw, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Disposition": {`form-data; name="file"; filename="suppressions.csv"`}, "Content-Type": {"text/csv"}})
		if _, err := io.Copy(fw, f); err != nil {
			return nil, "", err
		}
	}
	mw.Close()
	return &buf, mw.FormDataContentType(), nil
}

// e164ish is the shape of a number the list holds; the confirmation names the number
// from its link only when it has that shape (the API has no GET of one entry).
var e164ish = regexp.MustCompile(`^\+[0-9]{6,15}$`)

func (h *Handler) suppressionDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	what := "this number"
	if n := r.URL.Query().Get("number"); e164ish.MatchString(n) {
		what = n
	}
	h.confirmPage(w, r, "campaigns", confirmation{
		Title: "Remove " + what + " from the suppression list?", Need: needOf(data.NeedSuppressionRemove()),
		Lost:   []string{"Campaigns may call " + what + " again, from their next attempt on."},
		Kept:   []string{"Calls already made, and campaign recipients already settled as suppressed."},
		Button: "Remove number", Cancel: "/suppressions", Crumb: "Suppression list", CrumbHref: "/suppressions",
	}, http.StatusOK, nil)
}

func (h *Handler) suppressionDelete(w http.ResponseWriter, r *http.Request) {
	if _, err := h.call(r, "DELETE", "/api/v1/suppressions/"+url.PathEscape(r.PathValue("id")), nil, nil); err != nil {
		h.fail(w, r, err)
		return
	}
	h.done(w, r, "/suppressions", flash{Notice: "Number removed from the suppression list."})
}
