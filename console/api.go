package console

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
)

// apiError is the API's error shape, decoded from a failed call.
type apiError struct {
	Status  int                 `json:"-"`
	Message string              `json:"message"`
	Code    string              `json:"code"`
	Errors  map[string][]string `json:"errors"`
}

func (e *apiError) Error() string { return e.Message }

// reply is a successful call's decoded body.
type reply struct {
	Status int
	ETag   string
	Body   map[string]any
}

// Data returns the record of a {"data": {...}} body.
func (r *reply) Data() map[string]any {
	m, _ := r.Body["data"].(map[string]any)
	return m
}

// List returns the items of a {"data": [...]} body.
func (r *reply) List() []any {
	l, _ := r.Body["data"].([]any)
	return l
}

// NextCursor returns meta.next_cursor, "" on the last page.
func (r *reply) NextCursor() string {
	meta, _ := r.Body["meta"].(map[string]any)
	s, _ := meta["next_cursor"].(string)
	return s
}

// PrevCursor returns meta.prev_cursor, "" on the first page.
func (r *reply) PrevCursor() string {
	meta, _ := r.Body["meta"].(map[string]any)
	s, _ := meta["prev_cursor"].(string)
	return s
}

// call runs one request through the REST API in process, as the signed-in user (the
// session's token as the bearer token): the console holds no rule of its own, every
// check is the API's. A status of 400 or more comes back as *apiError.
func (h *Handler) call(r *http.Request, method, path string, q url.Values, body any) (*reply, error) {
	return h.send(r, apiCall{Method: method, Path: path, Query: q, Body: body})
}

// callIfMatch is call with If-Match: the edit fails with 412 when the record changed since
// the form showed it.
func (h *Handler) callIfMatch(r *http.Request, method, path, etag string, body any) (*reply, error) {
	return h.send(r, apiCall{Method: method, Path: path, Body: body, IfMatch: etag})
}

// create is a creating POST with the form's idempotency key (a hidden field each form
// carries): a second submission of the same form, a double click or a resent page,
// replays the first answer instead of creating twice.
func (h *Handler) create(r *http.Request, path string, body any) (*reply, error) {
	return h.send(r, apiCall{Method: "POST", Path: path, Body: body, IdempotencyKey: r.PostFormValue(idempotencyField)})
}

// apiCall is one request to the API.
type apiCall struct {
	Method, Path string
	Query        url.Values
	// Body is sent as JSON; Raw, when set, as it is with ContentType.
	Body           any
	Raw            io.Reader
	ContentType    string
	IfMatch        string
	IdempotencyKey string
	// Token is the bearer token when not the session's (a token just signed in with).
	Token string
}

// send runs c. Every failure is an *apiError, so pages may take its status and message
// without a check: a path that is not even a URL (an id with a stray character) is a 404,
// as the API would answer it, and anything else that goes wrong here a 500.
func (h *Handler) send(r *http.Request, c apiCall) (*reply, error) {
	rd, ctype := c.Raw, c.ContentType
	if rd == nil && c.Body != nil {
		b, err := json.Marshal(c.Body)
		if err != nil {
			return nil, internalError()
		}
		rd, ctype = bytes.NewReader(b), "application/json"
	}
	path := c.Path
	if len(c.Query) > 0 {
		path += "?" + c.Query.Encode()
	}
	req, err := http.NewRequestWithContext(r.Context(), c.Method, path, rd)
	if err != nil {
		return nil, &apiError{Status: http.StatusNotFound, Code: "not_found", Message: "No such page."}
	}
	if rd == nil {
		req.Body = http.NoBody // as a server's request has: handlers may read it
	}
	req.RemoteAddr = r.RemoteAddr // the login rate limit counts per client address
	for k, v := range map[string]string{"Content-Type": ctype, "If-Match": c.IfMatch, "Idempotency-Key": c.IdempotencyKey} {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	tok := c.Token
	if tok == "" {
		tok = SessionToken(r)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	rec := httptest.NewRecorder()
	h.api.ServeHTTP(rec, req)
	res := &reply{Status: rec.Code, ETag: rec.Header().Get("ETag")}
	if rec.Code >= 400 {
		e := &apiError{Status: rec.Code}
		if json.Unmarshal(rec.Body.Bytes(), e) != nil || e.Message == "" {
			e.Message = http.StatusText(rec.Code)
		}
		e.Message = modulesInWords(e.Message)
		for k, msgs := range e.Errors {
			for i, m := range msgs {
				e.Errors[k][i] = modulesInWords(m)
			}
		}
		return nil, e
	}
	if rec.Body.Len() > 0 {
		if err := data.DecodeJSON(rec.Body.Bytes(), &res.Body); err != nil {
			return nil, internalError()
		}
		floatsWhereExact(res.Body)
	}
	return res, nil
}

// floatsWhereExact turns each number of a decoded reply into a float64 where a float64
// writes it back as the API wrote it, which every number the API encodes from one does
// (counts, versions, durations, settings), and leaves the others json.Number: a user's
// 12345678901234567890 or 0.10 in a free-form value, which pages then show, and forms
// send back, as written (docs/api.md "Numbers in free-form values").
func floatsWhereExact(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = floatsWhereExact(e)
		}
	case []any:
		for i, e := range x {
			x[i] = floatsWhereExact(e)
		}
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return x
		}
		if b, _ := json.Marshal(f); string(b) == string(x) {
			return f
		}
	}
	return v
}

// filterQuery copies the parameters keys from a page's query for the API, and from and
// to, which the forms take as dates, as the start of the first day and the end of the last.
func filterQuery(in url.Values, keys ...string) url.Values {
	q := url.Values{}
	for _, k := range keys {
		if v := in.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	if v := in.Get("from"); v != "" {
		q.Set("from", dayParam(v, false))
	}
	if v := in.Get("to"); v != "" {
		q.Set("to", dayParam(v, true))
	}
	return q
}

func internalError() *apiError {
	return &apiError{Status: http.StatusInternalServerError, Code: "internal_error", Message: "Internal error."}
}
