package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestAnswerCheckSeesTheHeaderAsSent: the answer check reads an answer's header as the
// client got it. A Content-Type set after the body began is sent to no one (net/http
// sends the header at the first write, sniffing a type when none is set), so an answer
// written so is checked as untyped, and reported, not as the JSON it claims afterwards;
// one set before the write, or with WriteHeader, counts.
func TestAnswerCheckSeesTheHeaderAsSent(t *testing.T) {
	body := []byte(`{"data":{"id":"agt_1"}}`)
	for _, c := range []struct {
		name  string
		write func(w http.ResponseWriter)
		want  string // the Content-Type the check reads
	}{
		{"typed, then written", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}, "application/json"},
		{"typed, status, then written", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			w.Write(body)
		}, "application/json"},
		{"written, then typed", func(w http.ResponseWriter) {
			w.Write(body)
			w.Header().Set("Content-Type", "application/json")
		}, ""},
		{"status, then typed and written", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusOK)
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}, ""},
		{"nothing written", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
		}, "application/json"},
	} {
		wire := httptest.NewRecorder() // keeps the header as sent too
		rec := &statusRecorder{ResponseWriter: wire, body: &bytes.Buffer{}, observed: true}
		c.write(rec)
		if got := rec.sentHeader().Get("Content-Type"); got != c.want {
			t.Errorf("%s: the check reads Content-Type %q, want %q", c.name, got, c.want)
		}
		if c.want == "" && wire.Result().Header.Get("Content-Type") == "application/json" {
			t.Errorf("%s: the client got application/json: the case shows nothing", c.name)
		}
		if rec.bytes > 0 && !bytes.Equal(rec.keptBody(), body) {
			t.Errorf("%s: kept %q of a JSON or untyped answer, want its body", c.name, rec.keptBody())
		}
	}
}
