package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

type ctxKey int

const requestInfoKey ctxKey = iota

// testHookServed, when set, sees every request a server of the process has answered, with
// its route template ("unmatched" or "console" off the API) and status. Only the server's
// tests set it, before any server starts (export_internal_test.go): they check that every
// status a route answered is one the OpenAPI document lists for it.
var testHookServed func(r *http.Request, route string, status int)

// testHookAnswered, when set, sees every answer with its body (up to answerHookLimit
// bytes; a longer one is cut and its truncated flag set): the server's tests validate each
// body against its operation's schema in the OpenAPI document.
var testHookAnswered func(r *http.Request, route string, status int, header http.Header, body []byte, truncated bool)

// answerHookLimit bounds the body kept for testHookAnswered.
const answerHookLimit = 4 << 20

// requestInfo is filled as a request goes down the chain, for its log line.
type requestInfo struct {
	id     string
	client string // clientAddr's decision
	route  string // the route template, once matched
	userID string
}

func requestIDFrom(ctx context.Context) string {
	if info, ok := ctx.Value(requestInfoKey).(*requestInfo); ok {
		return info.id
	}
	return ""
}

// validRequestID accepts a caller's X-Request-Id only when it is short and plain, so that
// logs cannot be polluted through it.
func validRequestID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusRecorder remembers the status a handler wrote, for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
	// body keeps what was written when testHookAnswered is set (tests only).
	body      *bytes.Buffer
	truncated bool
	// observed is set when testHookAnswered is (tests only); sent is then the header as
	// it went out: net/http sends it at the first final WriteHeader or Write, and a change
	// made later (a Content-Type set after the body began) reaches no client, so the check
	// must not take it for the answer's.
	observed bool
	sent     http.Header
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	if code >= 200 { // an informational answer sends its header, not the final one
		s.noteSent()
	}
	s.ResponseWriter.WriteHeader(code)
}

// noteSent keeps the header as it goes out, once, when the answers are observed.
func (s *statusRecorder) noteSent() {
	if s.observed && s.sent == nil {
		s.sent = s.Header().Clone()
	}
}

// sentHeader is the answer's header as the client got it (for testHookAnswered): as sent,
// or, when nothing was written, as net/http will send it at the end.
func (s *statusRecorder) sentHeader() http.Header {
	if s.sent != nil {
		return s.sent
	}
	return s.Header()
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	s.noteSent()
	if s.body != nil && s.bytes == 0 && !jsonOrUntyped(s.sentHeader()) {
		// Only JSON bodies are checked (another type's is not read): keeping a stream's
		// first 4 MiB would hold memory the stream's own bounds are measured without
		// (TestEventStreamNeverReadingClientIsBounded).
		s.body = nil
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	if s.body != nil {
		if s.body.Len()+n > answerHookLimit {
			s.truncated = true
		} else {
			s.body.Write(b[:n])
		}
	}
	return n, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// keptBody is what Write kept for testHookAnswered: nil for an answer of another type.
func (s *statusRecorder) keptBody() []byte {
	if s.body == nil {
		return nil
	}
	return s.body.Bytes()
}

// jsonOrUntyped reports whether header gives an answer's media type as application/json,
// or none yet (net/http would sniff one: the check then reports the JSON sent untyped).
func jsonOrUntyped(header http.Header) bool {
	ct := header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	return ct == "" || mt == "application/json"
}

// observe gives every request an id, recovers panics into a masked 500, and logs one JSON
// line with the route template, status and duration. Tokens and bodies are never logged.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		info := &requestInfo{id: id, client: s.clientAddr(r)}
		ctx := context.WithValue(r.Context(), requestInfoKey, info)
		r = r.WithContext(data.WithClientAddress(ctx, info.client))
		rec := &statusRecorder{ResponseWriter: w}
		if testHookAnswered != nil {
			rec.body, rec.observed = &bytes.Buffer{}, true
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(r.Context(), "panic", slog.String("request_id", id), slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
				if rec.status == 0 {
					s.writeError(rec, r, fmt.Errorf("panic: %v", v))
				}
			}
			route := info.route
			if route == "" {
				route = "unmatched"
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			attrs := []slog.Attr{
				slog.String("request_id", id), slog.String("method", r.Method), slog.String("route", route),
				slog.String("client", info.client), slog.Int("status", status), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.Int("bytes", rec.bytes),
			}
			if info.userID != "" {
				attrs = append(attrs, slog.String("user_id", info.userID))
			}
			if s.metrics != nil {
				s.metrics(r.Method, route, status, time.Since(start))
			}
			if testHookServed != nil {
				testHookServed(r, route, status)
			}
			if testHookAnswered != nil {
				testHookAnswered(r, route, status, rec.sentHeader(), rec.keptBody(), rec.truncated)
			}
			s.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}
