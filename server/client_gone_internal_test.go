package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestClientGoneIsNoInternalError: a request whose client went away (a browser that
// navigated on while its sign-in was being checked), and whose storage call stopped with
// it (PostgreSQL's queries take the request's context), is logged as a closed request,
// not as an internal error answered 500 that an operator would look into.
func TestClientGoneIsNoInternalError(t *testing.T) {
	var logs bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	s.writeError(rec, httptest.NewRequest("POST", "/api/v1/auth/login", nil).WithContext(ctx),
		fmt.Errorf("reading the account: %w", context.Canceled))
	if rec.Code == http.StatusInternalServerError || strings.Contains(logs.String(), "internal error") {
		t.Errorf("a gone client's request: status %d, log %q; want no internal error", rec.Code, logs.String())
	}

	// The same error while the client still waits is a bug of ours: 500, logged.
	logs.Reset()
	rec = httptest.NewRecorder()
	s.writeError(rec, httptest.NewRequest("POST", "/api/v1/auth/login", nil), fmt.Errorf("reading the account: %w", context.Canceled))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(logs.String(), "internal error") {
		t.Errorf("a canceled call under a live request: status %d, log %q; want an internal error", rec.Code, logs.String())
	}
}
