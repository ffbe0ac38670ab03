package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// brokenAuth fails the way a bug would: a panic or a raw error.
type brokenAuth struct {
	data.AuthService
	panics bool
}

func (b brokenAuth) Authenticate(ctx context.Context, token string) (*data.Principal, error) {
	if b.panics {
		panic("index out of range in storage at /secret/path.go:12")
	}
	return nil, errors.New("bbolt: page 42 corrupt at /secret/path.go")
}

func TestInternalErrorsAreMasked(t *testing.T) {
	for _, panics := range []bool{true, false} {
		var logs bytes.Buffer
		s := New(Services{Auth: brokenAuth{panics: panics}}, Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/api/v1/user", nil)
		req.Header.Set("Authorization", "Bearer 1|abc")
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != 500 {
			t.Fatalf("panics=%v: status %d", panics, rec.Code)
		}
		id := rec.Header().Get("X-Request-Id")
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if body["code"] != "internal_error" || !strings.Contains(body["message"].(string), id) || id == "" {
			t.Errorf("500 body %s (request id %s)", rec.Body, id)
		}
		if _, has := body["errors"]; has {
			t.Error("errors member on a 500")
		}
		if strings.Contains(rec.Body.String(), "secret") || strings.Contains(rec.Body.String(), "bbolt") {
			t.Errorf("500 leaks internals: %s", rec.Body)
		}
		if !strings.Contains(logs.String(), "/secret/path.go") || !strings.Contains(logs.String(), id) {
			t.Errorf("the cause is not logged with the request id: %s", logs.String())
		}
	}
}

func TestStatusTable(t *testing.T) {
	want := map[string]int{
		data.EMALFORMED: 400, data.EUNAUTHORIZED: 401, data.EFORBIDDEN: 403, data.EQUOTA: 403,
		data.ENOTFOUND: 404, data.EMETHOD: 405, data.ECONFLICT: 409, data.EPRECONDITION: 412,
		data.ETOOLARGE: 413, data.EMEDIATYPE: 415, data.EINVALID: 422, data.ERATELIMITED: 429,
		data.EINTERNAL: 500, "something_new": 500,
	}
	for code, status := range want {
		if got := StatusOf(code); got != status {
			t.Errorf("%s → %d, want %d", code, got, status)
		}
	}
	// A wrapped application error keeps its status and shape.
	rec := httptest.NewRecorder()
	s := New(Services{}, Config{Logger: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil))})
	wrapped := errors.Join(data.FieldError("name", "bad"))
	s.writeError(rec, httptest.NewRequest("GET", "/", nil), wrapped)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `"errors":{"name":["bad"]}`) {
		t.Errorf("wrapped 422: %d %s", rec.Code, rec.Body)
	}
}

// unavailableAuth fails as storage does while its database cannot be reached.
type unavailableAuth struct{ data.AuthService }

func (unavailableAuth) Authenticate(ctx context.Context, token string) (*data.Principal, error) {
	return nil, fmt.Errorf("%w: dial tcp 127.0.0.1:5432: connect: connection refused", data.ErrStorageUnavailable)
}

// A database that cannot be reached is a 503 service_unavailable with Retry-After, in the
// error shape, its cause logged and not shown.
func TestUnavailableStorageIs503(t *testing.T) {
	var logs bytes.Buffer
	s := New(Services{Auth: unavailableAuth{}}, Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/v1/user", nil)
	req.Header.Set("Authorization", "Bearer 1|abc")
	s.Handler().ServeHTTP(rec, req)
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 503 || body["code"] != data.EUNAVAILABLE || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("%d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if strings.Contains(rec.Body.String(), "5432") || !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("body %s, logs %s: the cause belongs in the log only", rec.Body, logs.String())
	}
}
