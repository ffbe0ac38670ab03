package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
	"github.com/voiceapi/voiceapi/validate"
)

// MaxJSONBody is the default limit of a JSON request body (conventions §15).
const MaxJSONBody = 1 << 20

func writeJSON(w http.ResponseWriter, status int, v any) {
	// Encoded into a pooled buffer (the same bytes as json.Marshal and a newline): a page
	// of 100 calls is 90 KB that json.Marshal would allocate anew, and copy, per request.
	buf := responseBufs.Get().(*bytes.Buffer)
	defer putResponseBuf(buf)
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		http.Error(w, `{"message":"Internal error.","code":"internal_error"}`, http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// responseBufs are writeJSON's buffers; one that grew past maxPooledResponse is dropped
// rather than kept for every later small response.
var responseBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledResponse = 1 << 20

func putResponseBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooledResponse {
		responseBufs.Put(b)
	}
}

// writeRecord sends {"data": record, ...extra} with the record's strong ETag: the hash of
// the same bytes storage hashes for If-Match (data.ETagOf).
func writeRecord(w http.ResponseWriter, status int, record any, extra map[string]any) error {
	raw, err := json.Marshal(record)
	if err != nil {
		return err
	}
	return writeRawRecord(w, status, raw, extra)
}

// writeRawRecord is writeRecord for a record already encoded (raw is json.Marshal's
// output for it).
func writeRawRecord(w http.ResponseWriter, status int, raw []byte, extra map[string]any) error {
	// data.RecordBody writes the envelope around raw (a third of a GET agent's CPU went
	// to encoding/json compacting raw again); an Idempotency-Key's claim keeps the same
	// bytes (service/idempotency_claim.go). Members in sorted order, "data" first (the
	// extras, "secret" and "token", sort after it).
	body, err := data.RecordBody(raw, extra)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	// A known length spares chunked encoding (and a write) for bodies over 2 kB.
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("ETag", data.ETagOfBytes(raw))
	w.WriteHeader(status)
	w.Write(body)
	return nil
}

// listBody is the shape of every list response.
type listBody[T any] struct {
	Data []T       `json:"data"`
	Meta data.Page `json:"meta"`
}

func writeList[T any](w http.ResponseWriter, items []T, page data.Page) error {
	if items == nil {
		items = []T{}
	}
	writeJSON(w, http.StatusOK, listBody[T]{Data: items, Meta: page})
	return nil
}

// rawListBody joins items already encoded into the body writeList would send for them:
// the same bytes, joined rather than encoded (and, by encoding/json, validated) again.
func rawListBody(items []json.RawMessage, page data.Page) ([]byte, error) {
	meta, err := json.Marshal(page)
	if err != nil {
		return nil, err
	}
	n := len(meta) + 32
	for _, it := range items {
		n += len(it) + 1
	}
	body := make([]byte, 0, n)
	body = append(body, `{"data":[`...)
	for i, it := range items {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, it...)
	}
	body = append(body, `],"meta":`...)
	body = append(body, meta...)
	return append(body, "}\n"...), nil
}

// sendBody writes a 200 with the JSON body.
func sendBody(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

func writeNoContent(w http.ResponseWriter) error {
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// readJSONBody returns the raw body after checking its media type and size. An empty body
// is an empty object.
func readJSONBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, data.Errorf(data.ETOOLARGE, "The request body is larger than %d bytes.", tooLarge.Limit)
		}
		return nil, data.Errorf(data.EMALFORMED, "The request body could not be read.")
	}
	if len(body) == 0 {
		return nil, nil
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, data.Errorf(data.EMEDIATYPE, "A request body must be sent with Content-Type: application/json.")
	}
	return body, nil
}

// decodeInput reads the body strictly into dst (unknown fields, wrong types and nulls for
// non-nullable fields are faults) and returns the request's context carrying those faults
// (data.WithInputFaults): the service that checks the input's rules reports them with its
// own, in one 422 that names every fault of the request. Other failures (no body where one
// is needed, malformed JSON, another media type) return at once.
func decodeInput(r *http.Request, dst any) (context.Context, error) {
	body, err := readJSONBody(r)
	if err != nil {
		return nil, err
	}
	decodeErr := strictjson.Decode(body, dst)
	if decodeErr != nil && data.ErrorCode(decodeErr) != data.EINVALID {
		return nil, decodeErr
	}
	return data.WithInputFaults(r.Context(), withQueryFaults(r, decodeErr)), nil
}

// pathNumber reads a number of a path (an agent's version number, an API key's id) in
// its one spelling: decimal digits without sign or leading zero. Any other spelling names
// nothing (conventions §3), so that "01" or "+1" cannot reach the record "1" names.
func pathNumber(s string) (int64, bool) {
	if s == "" || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// MaxPerPage bounds per_page (spec: 1 to 100).
const MaxPerPage = data.MaxPerPage

// pageRequest reads per_page and cursor from the query. A list whose query holds
// undeclared parameters (queryFaults) is refused here, before storage reads a page that
// would never be sent: with them, per_page's fault and a malformed cursor's (one of
// another list, or tampered with, storage tells once the query is fixed).
func pageRequest(r *http.Request) (data.PageRequest, error) {
	q := r.URL.Query()
	req := data.PageRequest{Cursor: q.Get("cursor")}
	var perPageErr error
	if s := q.Get("per_page"); s != "" || q.Has("per_page") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxPerPage {
			perPageErr = data.FieldError("per_page", "The per_page field must be an integer between 1 and 100.")
		} else {
			req.PerPage = n
		}
	}
	if faults := queryFaults(r); faults != nil {
		return req, validate.Combine(faults, perPageErr, validate.PageCursorForm(req.Cursor))
	}
	return req, perPageErr
}
