package server

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/openapi"
)

// MaxIdempotencyKey bounds the Idempotency-Key header.
const MaxIdempotencyKey = data.MaxIdempotencyKey

// inFlight holds the (token, key) pairs whose first request is still running: a second
// one is 409 (conventions §17). It lives in memory, so a crash cannot strand a key.
type inFlight struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (f *inFlight) begin(k string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keys[k] {
		return false
	}
	f.keys[k] = true
	return true
}

func (f *inFlight) end(k string) {
	f.mu.Lock()
	delete(f.keys, k)
	f.mu.Unlock()
}

// captureWriter passes a response through while keeping a copy for replay.
type captureWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	// failed marks a 2xx response that is a failure all the same (a stream that ended
	// with its error frame, or one the client did not read whole): it is not kept.
	failed bool
	// keep keeps the response (a 2xx not failed) and frees its key; kept stops the copy.
	keep func()
	kept bool
}

// Unwrap lets http.NewResponseController reach the connection's writer: a stream's
// flushes and a long answer's deadlines go through the capture (each Write has already
// reached the writer underneath, so a flush skips nothing).
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if !c.kept {
		c.body.Write(b)
	}
	return c.ResponseWriter.Write(b)
}

// captureOf finds the Idempotency-Key capture among w and the writers it wraps.
func captureOf(w http.ResponseWriter) *captureWriter {
	for {
		switch x := w.(type) {
		case *captureWriter:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// notKept marks the response w writes, when an Idempotency-Key captures it, as not to be
// kept for replay though its status was 2xx.
func notKept(w http.ResponseWriter) {
	if c := captureOf(w); c != nil {
		c.failed = true
	}
}

// keepWithLast keeps the response w writes, when an Idempotency-Key captures it, with
// last (a stream's last frame) before last goes out. A stream's frames reach the client
// as they are written, so a client that read it whole and sends it again at once would
// otherwise be told the request is still in progress (409) rather than get the replay.
func keepWithLast(w http.ResponseWriter, last []byte) {
	if c := captureOf(w); c != nil && !c.kept {
		c.body.Write(last)
		c.keep()
	}
}

// replayedHeaders are the response headers kept with a replayed response.
var replayedHeaders = []string{"Content-Type", "ETag", "Location"}

// idempotent runs a creating POST under its Idempotency-Key: the same key and body within
// 24 hours replay the first successful response; another body is 422.
func (s *Server) idempotent(w http.ResponseWriter, r *http.Request, rt route) {
	key := r.Header.Get("Idempotency-Key")
	// Characters, as documented (and as the OpenAPI document's maxLength counts them); a
	// byte that is not UTF-8 counts as one.
	if utf8.RuneCountInString(key) > MaxIdempotencyKey {
		s.writeError(w, r, data.FieldError("Idempotency-Key", "The Idempotency-Key header must not be greater than 255 characters."))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeError(w, r, data.Errorf(data.ETOOLARGE, "The request body is too large."))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	streamed := rt.Streams && acceptsEventStream(r)
	hash := requestHash(r.Method, r.URL.Path, streamed, body)
	p := data.PrincipalFrom(r.Context())

	flightKey := strconv.FormatInt(p.TokenID, 10) + "|" + key
	if !s.inflight.begin(flightKey) {
		s.writeError(w, r, data.Errorf(data.ECONFLICT, "A request with this Idempotency-Key is still in progress."))
		return
	}
	endFlight := sync.OnceFunc(func() { s.inflight.end(flightKey) })
	defer endFlight()

	prev, err := s.svc.Idempotency.IdempotentResponse(r.Context(), p.TokenID, key)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if prev != nil {
		s.replay(w, r, rt, prev, hash)
		return
	}
	// The request's first change keeps a claim in its own transaction; the full response
	// replaces it below. A stream cannot be rebuilt from the record (its deltas are not
	// stored), so its claim keeps no answer: status 0, which a retry after a crash is told
	// was carried out.
	status := openapi.SuccessStatus(rt.Method, rt.Path)
	if streamed {
		status = 0
	}
	r = r.WithContext(data.WithIdempotencyClaim(r.Context(), &data.IdempotencyClaim{
		ID: rand.Text(), TokenID: p.TokenID, Key: key, RequestHash: hash, Status: status,
	}))
	cw := &captureWriter{ResponseWriter: w}
	cw.keep = func() {
		cw.kept = true
		s.keepResponse(r, cw, hash)
		endFlight()
	}
	if err := rt.handle(cw, r); err != nil {
		s.writeError(cw, r, err)
		return
	}
	if !cw.kept {
		cw.keep()
	}
}

// replay answers a request whose key has a kept response: that response when the request
// is the same (and the caller may still see the agent it acted on), else the error that
// says why.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, rt route, prev *data.IdempotentResponse, hash string) {
	if prev.RequestHash != hash {
		s.writeError(w, r, data.FieldError("Idempotency-Key", "This Idempotency-Key was used with a different request; use a new key."))
		return
	}
	if err := s.recheckReplay(r, rt, prev); err != nil {
		s.writeError(w, r, err)
		return
	}
	switch {
	case prev.Status == 0 && prev.ConversationID != "":
		// A streamed message's claim: the server stopped before keeping its frames, or
		// the turn ended the conversation, whose end keeps no message's raw answer.
		s.writeError(w, r, data.Errorf(data.ECONFLICT, "A message with this Idempotency-Key was carried out; its streamed answer is not kept (the server stopped before keeping it, or the turn ended the conversation). It is not repeated: read the conversation instead."))
		return
	case prev.Status == 0 && prev.StartedConversationID != "":
		// A conversation start's answer cut to its claim: the conversation was deleted
		// with its call (service/conversation_delete.go), or its answer could not be
		// redacted at its end. Its variables and opening are not replayed.
		s.writeError(w, r, data.Errorf(data.ECONFLICT, "A conversation start with this Idempotency-Key was carried out; its answer is no longer kept (the conversation was deleted with its call, or its answer could not be redacted). It is not repeated."))
		return
	case prev.Status == 0:
		// Only a claim: the change committed, and the server stopped before it kept
		// the response (service/idempotency_claim.go).
		s.writeError(w, r, data.Errorf(data.ECONFLICT, "A request with this Idempotency-Key was carried out, but the server stopped before answering it; it is not repeated. Look the record up instead."))
		return
	}
	for k, v := range prev.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Idempotent-Replayed", "true")
	// A kept answer may hold what is shown once (an API key's token, a webhook's secret,
	// a call start's credential in clear): no cache may keep its replay.
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(prev.Status)
	w.Write(prev.Body)
}

// recheckReplay makes the record-level access check a replay needs beyond the route's
// role, module and scope (checked before every request, a replay included): the caller
// must still see the agent the first request acted on, which the service noted in the
// kept record (data.NoteClaimAgent), so that a member whose agent_ids were narrowed
// since is not shown again what the narrowing took away. A record kept before agents
// were noted has none: the route's own check of it stands in (legacyRecheck). A route
// whose answer holds a record of another module checks that record first (replayRecheck).
func (s *Server) recheckReplay(r *http.Request, rt route, prev *data.IdempotentResponse) error {
	if rt.replayRecheck != nil {
		if err := rt.replayRecheck(r, prev); err != nil {
			return err
		}
	}
	switch {
	case prev.AgentID != "":
		return s.svc.Idempotency.CheckReplayAgent(r.Context(), prev.AgentID)
	case rt.legacyRecheck != nil:
		return rt.legacyRecheck(r, prev)
	}
	return nil
}

// testHookBeforeKeep, when set, runs once a request's change has committed and its answer
// was written, just before that answer is kept: a test commits an access change there.
// Atomic, as the servers of earlier tests may still be answering while a test sets it.
var testHookBeforeKeep atomic.Pointer[func(r *http.Request)]

// keepResponse keeps cw's response under the request's key, when it succeeded, with the
// agent the request acted on.
func (s *Server) keepResponse(r *http.Request, cw *captureWriter, hash string) {
	if cw.status < 200 || cw.status >= 300 || cw.failed {
		return
	}
	if data.IdempotencyClaimFrom(r.Context()).AnswerKept() {
		return // the claim, committed with the change, keeps the answer to replay
	}
	if hook := testHookBeforeKeep.Load(); hook != nil {
		(*hook)(r)
	}
	claim := data.IdempotencyClaimFrom(r.Context())
	resp := &data.IdempotentResponse{RequestHash: hash, Status: cw.status, Header: map[string]string{}, Body: cw.body.Bytes(),
		AgentID: claim.AgentID(), ConversationID: claim.ConversationID()}
	for _, k := range replayedHeaders {
		if v := cw.Header().Get(k); v != "" {
			resp.Header[k] = v
		}
	}
	p := data.PrincipalFrom(r.Context())
	key := r.Header.Get("Idempotency-Key")
	if err := s.svc.Idempotency.SaveIdempotentResponse(r.Context(), p.TokenID, key, resp); err != nil {
		s.log.Error("saving idempotent response", "request_id", requestIDFrom(r.Context()), "error", err)
	}
}

// requestHash identifies a request under an Idempotency-Key: method, path, body and, on a
// route that streams, whether it asked for the stream. A JSON request's hash is what it
// was before routes streamed, so keys kept across an upgrade still match.
func requestHash(method, path string, streamed bool, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	if streamed {
		// No JSON body starts with this line, so no other request hashes the same.
		h.Write([]byte("Accept: text/event-stream\n"))
	}
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
