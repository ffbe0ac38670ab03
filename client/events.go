package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// StreamOptions choose the events of a live event stream and where it starts.
type StreamOptions struct {
	// Types are the event types to receive (data.EventTypes); every type when empty.
	Types []string
	// LastEventID resumes after this event (sent as Last-Event-ID); when "", the stream
	// starts with what happens next.
	LastEventID string
}

// maxSSELine bounds one line of the stream the client reads (an event's data line), so a
// broken or hostile server cannot make it buffer without end.
const maxSSELine = 16 << 20

// EventStream is an open live event stream (GET /api/v1/events/stream). Next returns its
// events one by one; LastEventID is where to resume after the connection ends. It is not
// safe for concurrent use; Close it when done.
type EventStream struct {
	body io.ReadCloser
	r    *bufio.Reader
	// lastID is the id of the last message that ended; idBuffer the last id field read,
	// which WHATWG's "last event ID buffer" keeps across messages, with data or without.
	lastID, idBuffer string
	// afterCR: the last line ended with CR, so an LF right after it ends nothing.
	afterCR bool
	// started: the first line was read (a byte order mark may lead only that one).
	started bool
}

// Stream opens the workspace's live event stream: the events of the audit log the caller
// may read, as they happen (any member; a key with scopes needs audit:read; each event
// only if the caller may read its record, security events only for owners and admins
// who see every agent, docs/api.md "What a caller sees"). It returns once the server
// accepted the stream; a refusal is an *Error (422 for an unknown type or Last-Event-ID,
// 429 over the streams a token may hold). The stream lasts until ctx ends, Close, or the
// server ends it (Next then returns io.EOF): open it again with LastEventID set to
// EventStream.LastEventID to miss nothing. Follow does that for you.
func (s *AuditService) Stream(ctx context.Context, o StreamOptions, opts ...RequestOption) (*EventStream, error) {
	q := url.Values{}
	if len(o.Types) > 0 {
		q.Set("types", strings.Join(o.Types, ","))
	}
	u, err := s.c.url(operations["eventStream"].Path, nil, q)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if s.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.c.token)
	}
	if o.LastEventID != "" {
		req.Header.Set("Last-Event-ID", o.LastEventID)
	}
	var ro requestOptions
	for _, f := range opts {
		f(&ro)
	}
	for k, vs := range ro.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	res, err := s.c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return nil, decodeError(res, raw)
	}
	return newEventStream(res.Body, o.LastEventID), nil
}

func newEventStream(body io.ReadCloser, lastID string) *EventStream {
	return &EventStream{body: body, r: bufio.NewReader(body), lastID: lastID, idBuffer: lastID}
}

// LastEventID is the id of the last event Next returned (or the one the stream resumed
// after): where a new stream resumes.
func (st *EventStream) LastEventID() string { return st.lastID }

// Close ends the stream.
func (st *EventStream) Close() error { return st.body.Close() }

// Next returns the next event, waiting for it. Comment lines (heartbeats) are passed
// over. It returns io.EOF when the server ended the stream (a shutdown, a client too
// slow), and the read's error when the connection broke: resume from LastEventID either
// way.
func (st *EventStream) Next() (*data.Event, error) {
	var typ string
	var buf bytes.Buffer
	hasData := false
	for {
		line, err := st.line()
		if err != nil {
			return nil, err
		}
		if line == "" { // a blank line ends a message
			// As WHATWG's EventSource: the id read last counts once a message ends, even one
			// with no data (which is not dispatched), so a resume starts after it.
			st.lastID = st.idBuffer
			if !hasData {
				typ = ""
				continue
			}
			var e data.Event
			if err := data.DecodeJSON(buf.Bytes(), &e); err != nil {
				return nil, fmt.Errorf("client: event %s: %w", st.lastID, err)
			}
			if e.Type == "" {
				e.Type = typ
			}
			return &e, nil
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "": // a comment: a heartbeat or a note from the server
		case "id":
			if !strings.ContainsRune(value, 0) { // an id holding NUL is ignored
				st.idBuffer = value
			}
		case "event":
			typ = value
		case "data":
			if hasData {
				buf.WriteByte('\n')
			}
			buf.WriteString(value)
			hasData = true
		}
	}
}

// newLineReader reads a stream's lines.
func newLineReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }

// frame reads the next message's event name and data (comments passed over); io.EOF when
// the stream ended between messages.
func (st *EventStream) frame() (event string, payload []byte, err error) {
	var buf bytes.Buffer
	hasData := false
	for {
		line, err := st.line()
		if err != nil {
			return "", nil, err
		}
		if line == "" {
			if hasData {
				return event, buf.Bytes(), nil
			}
			event = ""
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			if hasData {
				buf.WriteByte('\n')
			}
			buf.WriteString(value)
			hasData = true
		}
	}
}

// line reads one line without its end (CRLF, LF or CR, as text/event-stream allows), in
// valid UTF-8 (a run of bytes that is not, as one U+FFFD), without the byte order mark
// that may lead the stream.
func (st *EventStream) line() (string, error) {
	var b []byte
	for {
		if st.r.Buffered() == 0 {
			if _, err := st.r.Peek(1); err != nil {
				if err == io.EOF && len(b) > 0 {
					err = io.ErrUnexpectedEOF // a message cut short is not delivered
				}
				return "", err
			}
		}
		chunk, _ := st.r.Peek(st.r.Buffered())
		if st.afterCR {
			st.afterCR = false
			if chunk[0] == '\n' {
				st.r.Discard(1)
				continue
			}
		}
		end := bytes.IndexAny(chunk, "\r\n")
		if end < 0 {
			b = append(b, chunk...)
			st.r.Discard(len(chunk))
		} else {
			b = append(b, chunk[:end]...)
			st.afterCR = chunk[end] == '\r'
			st.r.Discard(end + 1)
		}
		if len(b) > maxSSELine {
			return "", fmt.Errorf("client: an event stream line longer than %d bytes", maxSSELine)
		}
		if end >= 0 {
			line := strings.ToValidUTF8(string(b), "\uFFFD")
			if !st.started {
				st.started = true
				line = strings.TrimPrefix(line, "\uFEFF")
			}
			return line, nil
		}
	}
}

// Follow iterates over the workspace's live events until ctx ends or the loop breaks,
// reconnecting after each disconnection with Last-Event-ID, so that no event is missed
// or repeated. Refusals that a retry may cure (429, 5xx, a broken connection) are
// retried with the client's backoff (honouring Retry-After); any other error (401, 403,
// 422) is yielded once and ends the iteration, as does ctx ending (without an error).
func (s *AuditService) Follow(ctx context.Context, o StreamOptions, opts ...RequestOption) iter.Seq2[*data.Event, error] {
	return func(yield func(*data.Event, error) bool) {
		failures := 0
		for ctx.Err() == nil {
			st, err := s.Stream(ctx, o, opts...)
			if err == nil {
				for {
					var e *data.Event
					if e, err = st.Next(); err != nil {
						break
					}
					failures = 0
					o.LastEventID = st.LastEventID()
					if !yield(e, nil) {
						st.Close()
						return
					}
				}
				st.Close()
			}
			if ctx.Err() != nil {
				return
			}
			failures++
			wait, ok := s.c.followDelay(err, failures)
			if !ok {
				yield(nil, err)
				return
			}
			if s.c.sleep(ctx, wait) != nil {
				return
			}
		}
	}
}

// followDelay is how long Follow waits before reconnecting after err, and whether it
// should: a stream that ended or broke is resumed; a refusal only when a retry may
// cure it.
func (c *Client) followDelay(err error, failures int) (d time.Duration, ok bool) {
	var e *Error
	if errors.As(err, &e) {
		if e.StatusCode != http.StatusTooManyRequests && e.StatusCode < 500 {
			return 0, false
		}
		if e.RetryAfter > 0 {
			return e.RetryAfter, true
		}
	}
	if failures == 1 && !errors.As(err, &e) {
		return 0, true // the server ended the stream (shutdown, slow read): resume at once
	}
	return backoff(c.retry, failures), true
}
