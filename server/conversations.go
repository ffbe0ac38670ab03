package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// conversationNeed gates conversations: data.ConversationNeed, the rule the service's
// messages follow too.
var conversationNeed = data.ConversationNeed

// conversationAnswerTime bounds a message's request: the answer's limit (which the
// service holds it to) and a margin to write it.
const conversationAnswerTime = data.ConversationAnswerLimit + 30*time.Second

func (s *Server) conversationRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/v1/agents/{agent_id}/conversations", Need: conversationNeed, Idempotent: true, handle: s.handleConversationStart, legacyRecheck: s.recheckAgentPath},
		{Method: "GET", Path: "/api/v1/conversations", Need: conversationNeed, handle: s.handleConversationList},
		{Method: "GET", Path: "/api/v1/conversations/{conversation_id}", Need: conversationNeed, handle: s.handleConversationShow},
		{Method: "POST", Path: "/api/v1/conversations/{conversation_id}/messages", Need: conversationNeed, Idempotent: true, Streams: true,
			handle: s.handleConversationMessage, legacyRecheck: s.recheckConversation},
		{Method: "POST", Path: "/api/v1/conversations/{conversation_id}/end", Need: conversationNeed, NoBody: true, handle: s.handleConversationEnd},
	}
}

// lifeDeadlines lets a request outlive the server's read and write timeouts while a
// model answers: its body is read, and the service bounds the answer.
func lifeDeadlines(w http.ResponseWriter) *http.ResponseController {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{}) // a passed read deadline would cancel the request's context
	rc.SetWriteDeadline(time.Now().Add(conversationAnswerTime))
	return rc
}

// handleConversationStart: POST /api/v1/agents/{agent_id}/conversations — 201 with the
// conversation, the agent's opening in its messages when it speaks first.
func (s *Server) handleConversationStart(w http.ResponseWriter, r *http.Request) error {
	var in data.ConversationStart
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	lifeDeadlines(w)
	c, err := s.svc.Conversations.StartConversation(ctx, mux.Vars(r)["agent_id"], in, data.ConversationObserver{})
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, c, nil)
}

// handleConversationList: GET /api/v1/conversations?agent_id=&status= — the
// conversations without their messages. The parameters' faults go to the service, which
// adds its own in one 422.
func (s *Server) handleConversationList(w http.ResponseWriter, r *http.Request) error {
	req, pageErr := pageRequest(r)
	f, filterErr := validate.ConversationFilterParams(r.URL.Query())
	ctx := data.WithInputFaults(r.Context(), validate.Combine(pageErr, filterErr))
	list, page, err := s.svc.Conversations.ListConversations(ctx, f, req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleConversationShow: GET /api/v1/conversations/{conversation_id}.
func (s *Server) handleConversationShow(w http.ResponseWriter, r *http.Request) error {
	c, err := s.svc.Conversations.Conversation(r.Context(), mux.Vars(r)["conversation_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, c, nil)
}

// recheckConversation is the access check of a message's conversation (the member's
// agent_ids, the workspace), made again before a message's answer kept by an earlier
// release is replayed (idempotency_recheck.go).
func (s *Server) recheckConversation(r *http.Request, _ *data.IdempotentResponse) error {
	_, err := s.svc.Conversations.Conversation(r.Context(), mux.Vars(r)["conversation_id"])
	return err
}

// handleConversationEnd: POST /api/v1/conversations/{conversation_id}/end — 200 with the
// call the conversation became.
func (s *Server) handleConversationEnd(w http.ResponseWriter, r *http.Request) error {
	c, err := s.svc.Conversations.EndConversation(r.Context(), mux.Vars(r)["conversation_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, c, nil)
}

// handleConversationMessage: POST /api/v1/conversations/{conversation_id}/messages — 200
// with the turn. With Accept: text/event-stream the reply streams (see messageStream).
func (s *Server) handleConversationMessage(w http.ResponseWriter, r *http.Request) error {
	var in data.ConversationMessage
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	rc := lifeDeadlines(w)
	id := mux.Vars(r)["conversation_id"]
	if !acceptsEventStream(r) {
		turn, err := s.svc.Conversations.SendMessage(ctx, id, in, data.ConversationObserver{})
		if err != nil {
			return err
		}
		return writeRecord(w, http.StatusOK, turn, nil)
	}
	ms := &messageStream{w: w, sw: &sseWriter{w: w, rc: rc, stall: conversationAnswerTime, closing: s.streams.closing}}
	turn, err := s.svc.Conversations.SendMessage(ctx, id, in, data.ConversationObserver{Text: ms.text, Item: ms.item})
	if !ms.started {
		if err != nil {
			return err // nothing was sent: the error goes out with its own status
		}
		if err := ms.start(); err != nil {
			notKept(w)
			return nil
		}
	}
	if err != nil {
		// The status is sent: the error travels as the stream's last frame.
		if data.ErrorCode(err) == data.EINTERNAL {
			s.log.ErrorContext(r.Context(), "internal error", slog.String("request_id", requestIDFrom(r.Context())), slog.String("error", err.Error()))
		}
		body, _ := json.Marshal(streamError(err, requestIDFrom(r.Context())))
		ms.frame("error", body)
		notKept(w)
		return nil
	}
	body, err := json.Marshal(map[string]any{"data": turn})
	if err != nil {
		return nil
	}
	last := frameBytes("done", body)
	if ms.broken {
		// The turn is stored, but a frame did not go out: an Idempotency-Key keeps only
		// its claim, and a retry is told the message was carried out.
		notKept(w)
	} else {
		keepWithLast(w, last)
	}
	ms.send(last)
	return nil
}

// streamError is the error shape of an error frame; an internal error names the request
// id and nothing internal, as writeError does, and a known cause below storage (the
// database unavailable, or upgraded by a newer voiceapi) is told as writeError tells it.
func streamError(err error, reqID string) errorBody {
	err = classify(err)
	code := data.ErrorCode(err)
	if StatusOf(code) == http.StatusInternalServerError {
		return errorBody{Message: "Internal error; quote request id " + reqID + " when reporting it.", Code: data.EINTERNAL}
	}
	return errorBody{Message: data.ErrorMessage(err), Code: code}
}

// messageStream writes a reply as Server-Sent Events: "item" frames (each item once
// complete: the user's message, each agent reply, each tool's result), "delta" frames
// ({"text": …}, the agent's text as the model writes it), then one "done" frame
// ({"data": turn}) or "error" frame (the error shape). The stream starts with the first
// piece of the agent's reply, not with the user's item: a provider that fails before
// answering still gets its own status (502, 504), not a stream.
type messageStream struct {
	w       http.ResponseWriter
	sw      *sseWriter
	started bool
	pending [][]byte // item frames held until the stream starts
	broken  bool     // a frame failed to go out
}

func (ms *messageStream) start() error {
	h := ms.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	ms.w.WriteHeader(http.StatusOK)
	ms.started = true
	for _, p := range ms.pending {
		if err := ms.frame("item", p); err != nil {
			return err
		}
	}
	ms.pending = nil
	return nil
}

func (ms *messageStream) text(delta string) error {
	if !ms.started {
		if err := ms.start(); err != nil {
			return err
		}
	}
	body, err := json.Marshal(map[string]string{"text": delta})
	if err != nil {
		return err
	}
	return ms.frame("delta", body)
}

func (ms *messageStream) item(it *data.ConversationItem) error {
	body, err := json.Marshal(it)
	if err != nil {
		return err
	}
	if !ms.started {
		if it.Role == data.ItemUser {
			ms.pending = append(ms.pending, body)
			return nil
		}
		if err := ms.start(); err != nil {
			return err
		}
	}
	return ms.frame("item", body)
}

// frame sends one event through the event stream's writer (its stall bound per send).
func (ms *messageStream) frame(event string, body []byte) error {
	return ms.send(frameBytes(event, body))
}

// send writes one encoded frame; a frame that fails marks the stream broken.
func (ms *messageStream) send(frame []byte) error {
	err := ms.sw.send(func() error {
		_, err := ms.w.Write(frame)
		return err
	})
	if err != nil {
		ms.broken = true
	}
	return err
}

// frameBytes encodes one Server-Sent Event.
func frameBytes(event string, body []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(body) + len(event) + 16)
	b.WriteString("event: ")
	b.WriteString(event)
	b.WriteString("\ndata: ")
	b.Write(body) // JSON holds no raw newline
	b.WriteString("\n\n")
	return b.Bytes()
}
