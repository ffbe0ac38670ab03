package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

// The live event stream (GET /api/v1/events/stream, docs/events.md): Server-Sent Events
// read from the durable event log, so a client that reconnects with Last-Event-ID misses
// nothing and gets nothing twice.
const (
	// MaxStreamsPerToken bounds the event streams one token holds open at once on one
	// server process; one more is 429 rate_limited with Retry-After.
	MaxStreamsPerToken = data.MaxEventStreamsPerToken
	// DefaultStreamHeartbeat is how often an idle stream sends a comment line.
	DefaultStreamHeartbeat = data.EventStreamHeartbeat
	// DefaultStreamPoll bounds how long an event committed by another process (another
	// replica of a shared database, an admin command) waits before a stream reads it;
	// events of this process wake the streams at once (WakeStreams).
	DefaultStreamPoll = time.Second
	// streamBatch is the events one read of the log returns (the service bounds it
	// again): with the connection's write buffer, what a stream holds in memory.
	streamBatch = 64
	// streamRetryAfter is the Retry-After of a refused stream, in seconds.
	streamRetryAfter = 5
	// streamCloseGrace is how long a stream's last write may take once the server shuts
	// down: a client that reads nothing does not hold the shutdown for a write timeout.
	streamCloseGrace = time.Second
)

// StreamConfig tunes the live event stream; zero fields take the defaults.
type StreamConfig struct {
	Heartbeat time.Duration // DefaultStreamHeartbeat
	Poll      time.Duration // DefaultStreamPoll
}

func (c StreamConfig) withDefaults() StreamConfig {
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultStreamHeartbeat
	}
	if c.Poll <= 0 {
		c.Poll = DefaultStreamPoll
	}
	return c
}

// streamHub wakes the open streams when events commit, counts them per token, and ends
// them all at shutdown.
type streamHub struct {
	mu       sync.Mutex
	wake     chan struct{} // closed (and replaced) by Wake
	perToken map[int64]int
	closing  context.Context
	close    context.CancelFunc
}

func newStreamHub() *streamHub {
	ctx, cancel := context.WithCancel(context.Background())
	return &streamHub{wake: make(chan struct{}), perToken: map[int64]int{}, closing: ctx, close: cancel}
}

// signal returns the channel the next Wake closes. A stream takes it before reading the
// log, so an event committed after that read is never missed.
func (h *streamHub) signal() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.wake
}

func (h *streamHub) Wake() {
	h.mu.Lock()
	close(h.wake)
	h.wake = make(chan struct{})
	h.mu.Unlock()
}

// acquire counts a stream of token, or refuses it over MaxStreamsPerToken or once the
// server is shutting down.
func (h *streamHub) acquire(token int64) (release func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing.Err() != nil {
		return nil, data.Errorf(data.EUNAVAILABLE, "The server is shutting down; reconnect with Last-Event-ID.")
	}
	if h.perToken[token] >= MaxStreamsPerToken {
		return nil, data.Errorf(data.ERATELIMITED, "This token already holds %d event streams, the most it may hold at once. Close one, or retry in %d seconds.", MaxStreamsPerToken, streamRetryAfter)
	}
	h.perToken[token]++
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.perToken[token]--; h.perToken[token] <= 0 {
			delete(h.perToken, token)
		}
	}, nil
}

// WakeStreams tells the open event streams that events were committed: the storage's
// event hook calls it after each commit that recorded events.
func (s *Server) WakeStreams() { s.streams.Wake() }

// CloseStreams ends every open event stream (their clients resume with Last-Event-ID)
// and refuses new ones. ListenAndServe calls it when shutdown begins, since a stream
// never goes idle by itself.
func (s *Server) CloseStreams() { s.streams.close() }

// eventStreamRoutes: the stream is open to every member of the workspace (an API key
// with scopes needs audit:read) and carries the events the caller may see: those of the
// records it may read, security events only to those who may read the audit log
// (service/visibility.go).
func (s *Server) eventStreamRoutes() []route {
	return []route{{Method: "GET", Path: "/api/v1/events/stream", Need: eventStreamNeed, handle: s.handleEventStream}}
}

// handleEventStream: GET /api/v1/events/stream?types=&last_event_id= — the current
// workspace's events as Server-Sent Events. Last-Event-ID (the header a browser's
// EventSource sends when it reconnects) wins over last_event_id (for clients that cannot
// set headers): an EventSource keeps its first URL when it reconnects.
func (s *Server) handleEventStream(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	types := splitList(q["types"])
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = q.Get("last_event_id")
	}
	pos, err := s.svc.Audit.StreamStart(r.Context(), last, types)
	if err := withQueryFaults(r, err); err != nil {
		return err
	}
	release, err := s.streams.acquire(data.PrincipalFrom(r.Context()).TokenID)
	if err != nil {
		if data.ErrorCode(err) == data.ERATELIMITED {
			w.Header().Set("Retry-After", strconv.Itoa(streamRetryAfter))
		}
		return err
	}
	defer release()

	rc := http.NewResponseController(w)
	// The server's read timeout would end the request (its context) while the stream
	// is still wanted: a stream reads no body, so it lifts the read deadline. Its write
	// deadline is its own: see sseWriter.
	rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: pass each event on at once
	sw := &sseWriter{w: w, rc: rc, stall: s.cfg.Timeouts.withDefaults().Write, closing: s.streams.closing}
	// At shutdown a stream blocked writing to a client that reads nothing gives up
	// within the grace, instead of holding the drain for a whole write timeout.
	stop := context.AfterFunc(s.streams.closing, func() { rc.SetWriteDeadline(time.Now().Add(streamCloseGrace)) })
	defer stop()
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	st := &eventStream{s: s, r: r, sw: sw, types: types, pos: pos, cfg: s.cfg.Stream.withDefaults()}
	err = st.run()
	if s.streams.closing.Err() != nil {
		// The end of the response gets the grace from now: a stream that was reading the
		// log when shutdown began, rather than blocked on its client, still ends cleanly.
		// A write that failed already fails the end at once.
		rc.SetWriteDeadline(time.Now().Add(streamCloseGrace))
	}
	if err != nil {
		s.log.InfoContext(r.Context(), "event stream ended", slog.String("request_id", requestIDFrom(r.Context())), slog.String("reason", err.Error()))
	}
	return nil // the status is sent: nothing more can be said in the error shape
}

// splitList reads a repeatable, comma-separated query parameter.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// eventStream is one open stream: its position in the log and how it writes.
type eventStream struct {
	s     *Server
	r     *http.Request
	sw    *sseWriter
	types []string
	pos   string
	cfg   StreamConfig
	// reader is the context the log is read with: the request's, carrying the caller as
	// last authorized.
	reader context.Context
}

// run sends what the log holds after the position, then waits for a wake-up, the poll
// interval or a heartbeat, until the client leaves, the server shuts down, the token
// loses the right to read, or a write stalls. The error says why it ended.
func (st *eventStream) run() error {
	ctx := st.r.Context()
	st.reader = ctx
	if err := st.sw.send(func() error { return st.sw.comment("voiceapi event stream") }); err != nil {
		return err
	}
	poll := time.NewTicker(st.cfg.Poll)
	defer poll.Stop()
	heartbeat := time.NewTicker(st.cfg.Heartbeat)
	defer heartbeat.Stop()
	for {
		wake := st.s.streams.signal()
		sent, err := st.catchUp()
		if err != nil {
			return err
		}
		if sent {
			heartbeat.Reset(st.cfg.Heartbeat) // events are signs of life too
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-st.s.streams.closing.Done():
			return errShuttingDown
		case <-wake:
		case <-poll.C:
		case <-heartbeat.C:
			if st.reader, err = st.reauthorize(); err != nil {
				return err
			}
			if err := st.sw.send(func() error { return st.sw.comment("heartbeat") }); err != nil {
				return err
			}
		}
	}
}

var errShuttingDown = data.Errorf(data.EUNAVAILABLE, "the server is shutting down")

// catchUp writes every event after the position, one bounded read at a time, and reports
// whether it wrote any. The token's rights are checked again before events go out: a
// revoked key or a demoted member stops receiving at once, and when the rights changed
// since the read (modules, agent_ids, scopes), the batch is read again under the new ones,
// so no event goes out that the reader may no longer see.
func (st *eventStream) catchUp() (bool, error) {
	sent := false
	for {
		// Shutdown ends the stream before its next read: the run loop's select may pick a
		// wake-up over it, and a read that passes over events loops without selecting.
		if st.s.streams.closing.Err() != nil {
			return sent, errShuttingDown
		}
		list, next, err := st.s.svc.Audit.StreamEvents(st.reader, st.pos, st.types, streamBatch)
		if err != nil {
			return sent, err
		}
		if len(list) > 0 {
			fresh, err := st.reauthorize()
			if err != nil {
				return sent, err
			}
			same := data.PrincipalFrom(fresh).SameAccess(data.PrincipalFrom(st.reader))
			st.reader = fresh
			if !same {
				continue
			}
			if err := st.sw.send(func() error { return st.sw.events(list) }); err != nil {
				return sent, err
			}
			sent = true
		}
		if next == st.pos {
			return sent, nil
		}
		st.pos = next
	}
}

// reauthorize authenticates the request's token again (cached by row revisions) and
// checks the route's requirement, returning the context to read with.
func (st *eventStream) reauthorize() (context.Context, error) {
	p, err := st.s.authenticate(st.r)
	if err == nil {
		err = st.s.authorize(st.r, p, eventStreamNeed)
	}
	if err != nil {
		st.sw.send(func() error { return st.sw.comment("closed: " + data.ErrorMessage(err)) })
		return nil, err
	}
	return data.WithPrincipal(st.r.Context(), p), nil
}

// eventStreamNeed is the stream route's requirement, checked again while it runs.
var eventStreamNeed = data.Member("").WithScope(data.ScopeAuditRead)

// sseWriter writes the text/event-stream format. Each send must reach the connection
// within stall (the server's write timeout): a client that stops reading is dropped
// then, holding at most one read of the log and the connection's buffer meanwhile; it
// resumes with Last-Event-ID.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	stall   time.Duration
	closing context.Context // done when the server shuts down
	buf     bytes.Buffer
}

// send pushes the write deadline to stall from now, runs fill and flushes.
func (sw *sseWriter) send(fill func() error) error {
	if err := sw.extend(); err != nil {
		return err
	}
	if err := fill(); err != nil {
		return err
	}
	return sw.rc.Flush()
}

// extend moves the write deadline to stall from now, unless the server is shutting
// down. It sets, then checks: a shutdown that begins after the check moves the deadline
// to the grace after this one, so a stream never outlives the grace by extending it.
func (sw *sseWriter) extend() error {
	if err := sw.rc.SetWriteDeadline(time.Now().Add(sw.stall)); err != nil && err != http.ErrNotSupported {
		return err
	}
	if sw.closing.Err() != nil {
		sw.rc.SetWriteDeadline(time.Now().Add(streamCloseGrace))
		return errShuttingDown
	}
	return nil
}

// comment writes a comment line, which clients ignore (heartbeats).
func (sw *sseWriter) comment(text string) error {
	_, err := sw.w.Write([]byte(": " + strings.ReplaceAll(text, "\n", " ") + "\n\n"))
	return err
}

// events writes one message per event: id, event (the type) and data (the envelope
// webhooks get), id first so that a message cut short is never counted as received.
func (sw *sseWriter) events(list []*data.Event) error {
	for _, e := range list {
		if !sseFieldValue(e.ID) || !sseFieldValue(e.Type) || e.Type == "" {
			// No event stream can carry it: a line break would start another field or
			// event, a NUL makes a browser ignore the id, and an empty type reads as
			// "message". Ids and types are the server's own, so this is a defect to see
			// in the log, not an event to bend.
			return fmt.Errorf("event %q of type %q cannot be written as a server-sent event", e.ID, e.Type)
		}
		body, err := e.Envelope()
		if err != nil {
			return err
		}
		body = validUTF8JSON(body)
		sw.buf.Reset()
		sw.buf.WriteString("id: " + e.ID + "\nevent: " + e.Type + "\n")
		// A JSON encoding holds no raw newline; each line gets its own data field anyway.
		for line := range bytes.SplitSeq(body, []byte("\n")) {
			sw.buf.WriteString("data: ")
			sw.buf.Write(line)
			sw.buf.WriteByte('\n')
		}
		sw.buf.WriteByte('\n')
		// Each event has the whole stall to go out: a slow reader keeps its stream.
		if err := sw.extend(); err != nil {
			return err
		}
		if _, err := sw.w.Write(sw.buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// sseFieldValue reports whether s reads back unchanged as an id or event field: valid
// UTF-8 (a parser replaces the rest), without CR, LF (line ends) or NUL.
func sseFieldValue(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsAny(s, "\r\n\x00")
}

// validUTF8JSON replaces each byte of enc that is not UTF-8 with U+FFFD. The event stream
// format is UTF-8 only (a browser reads such a byte as U+FFFD, sometimes one for several),
// and a JSON reader takes each such byte in a string as U+FFFD anyway (Go's does), so what
// a client reads is the same document, and now the same whoever reads it. Events' data is
// made by json.Marshal, which writes no such byte; this is for what came in raw.
func validUTF8JSON(enc []byte) []byte {
	if utf8.Valid(enc) {
		return enc
	}
	out := make([]byte, 0, len(enc)+8)
	for len(enc) > 0 {
		r, n := utf8.DecodeRune(enc)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, enc[:n]...)
		}
		enc = enc[n:]
	}
	return out
}
