package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// ConversationsService calls the conversation routes (conventions §21).
type ConversationsService struct{ c *Client }

// Start starts a conversation with the agent: in.Version live (the zero value), draft or
// a version number. When the agent speaks first its opening is in Messages.
func (s *ConversationsService) Start(ctx context.Context, agentID string, in data.ConversationStart, opts ...RequestOption) (*data.Conversation, error) {
	c, _, err := sendRecord[data.Conversation](ctx, s.c, "conversationStart", []string{agentID}, in, opts)
	return c, err
}

// List returns one page of the conversations the filter selects, newest first, without
// their messages (Get has them).
func (s *ConversationsService) List(ctx context.Context, f data.ConversationFilter, p data.PageRequest, opts ...RequestOption) ([]*data.ConversationSummary, data.Page, error) {
	q := url.Values{}
	if f.AgentID != "" {
		q.Set("agent_id", f.AgentID)
	}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	res, err := s.c.do(ctx, request{op: "conversationList", query: pageQuery(q, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.ConversationSummary](res)
}

// All iterates over every conversation the filter selects.
func (s *ConversationsService) All(ctx context.Context, f data.ConversationFilter, opts ...RequestOption) iter.Seq2[*data.ConversationSummary, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.ConversationSummary, data.Page, error) {
		return s.List(ctx, f, p, opts...)
	})
}

// Get returns a conversation with its messages.
func (s *ConversationsService) Get(ctx context.Context, id string, opts ...RequestOption) (*data.Conversation, error) {
	c, _, err := getRecord[data.Conversation](ctx, s.c, "conversationShow", []string{id}, opts)
	return c, err
}

// Send sends a user message and returns the turn it made, whole. Under
// WithIdempotencyKey a failed attempt (a 503, a dropped connection) is retried, and the
// repeat gets the first turn back rather than making a second one.
func (s *ConversationsService) Send(ctx context.Context, id, content string, opts ...RequestOption) (*data.ConversationTurn, error) {
	t, _, err := sendRecord[data.ConversationTurn](ctx, s.c, "conversationMessage", []string{id}, data.ConversationMessage{Content: content}, opts)
	return t, err
}

// End ends the conversation and returns the call it became.
func (s *ConversationsService) End(ctx context.Context, id string, opts ...RequestOption) (*data.Call, error) {
	c, _, err := sendRecord[data.Call](ctx, s.c, "conversationEnd", []string{id}, nil, opts)
	return c, err
}

// SendStream sends a user message and streams the reply (Accept: text/event-stream):
// obs.Text receives the agent's text as the model writes it, obs.Item each item once
// complete; the turn comes back at the end. A failure before the reply began is an *Error
// with its status (502 provider_error, 409, ...); one after it began is an *Error with
// the error frame's code and message (StatusCode 0: the status was 200). The message is
// sent once, never retried; under WithIdempotencyKey, sending it again with the same key
// and content gets the first turn back (its recorded stream), never a second turn.
func (s *ConversationsService) SendStream(ctx context.Context, id, content string, obs data.ConversationObserver, opts ...RequestOption) (*data.ConversationTurn, error) {
	u, err := s.c.url(operations["conversationMessage"].Path, []string{id}, nil)
	if err != nil {
		return nil, err
	}
	body, err := jsonBody(data.ConversationMessage{Content: content})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if s.c.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.c.token)
	}
	var ro requestOptions
	for _, f := range opts {
		f(&ro)
	}
	if ro.idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", ro.idempotencyKey)
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
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return nil, decodeError(res, raw)
	}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		// A server that does not stream answers with the whole turn.
		raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
		if err != nil {
			return nil, err
		}
		var env struct{ Data data.ConversationTurn }
		if err := data.DecodeJSON(raw, &env); err != nil {
			return nil, fmt.Errorf("client: reading a turn: %w", err)
		}
		return &env.Data, nil
	}
	return readTurnStream(&EventStream{body: res.Body, r: newLineReader(res.Body)}, obs)
}

// readTurnStream reads a streamed reply's frames until done or error.
func readTurnStream(st *EventStream, obs data.ConversationObserver) (*data.ConversationTurn, error) {
	for {
		event, raw, err := st.frame()
		if err == io.EOF {
			return nil, fmt.Errorf("client: the reply stream ended without its done frame")
		}
		if err != nil {
			return nil, err
		}
		switch event {
		case "delta":
			var d struct{ Text string }
			if err := data.DecodeJSON(raw, &d); err != nil {
				return nil, fmt.Errorf("client: a delta frame: %w", err)
			}
			if obs.Text != nil {
				if err := obs.Text(d.Text); err != nil {
					return nil, err
				}
			}
		case "item":
			var it data.ConversationItem
			if err := data.DecodeJSON(raw, &it); err != nil {
				return nil, fmt.Errorf("client: an item frame: %w", err)
			}
			if obs.Item != nil {
				if err := obs.Item(&it); err != nil {
					return nil, err
				}
			}
		case "done":
			var env struct{ Data data.ConversationTurn }
			if err := data.DecodeJSON(raw, &env); err != nil {
				return nil, fmt.Errorf("client: the done frame: %w", err)
			}
			return &env.Data, nil
		case "error":
			var e struct{ Message, Code string }
			data.DecodeJSON(raw, &e)
			return nil, &Error{Code: e.Code, Message: e.Message}
		}
	}
}
