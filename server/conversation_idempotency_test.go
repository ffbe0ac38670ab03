package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/llm"
)

// orderConv is a conversation with an agent whose one tool is a custom function: the
// model calls it for every message and then answers with its result. hits counts the
// function's requests, keys their Idempotency-Key headers; hold, when set, keeps each
// request waiting until it is closed.
type orderConv struct {
	*convEnv
	agent, id, path string
	hits            atomic.Int32
	hold            atomic.Pointer[chan struct{}]
	mu              sync.Mutex
	keys            []string
}

const orderMessage = `{"content":"where is A-1?"}`

func newOrderConv(t *testing.T, settings ...func(*cli.LLMSettings)) *orderConv {
	t.Helper()
	c := &orderConv{}
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		c.mu.Lock()
		c.keys = append(c.keys, r.Header.Get("Idempotency-Key"))
		c.mu.Unlock()
		if hold := c.hold.Load(); hold != nil {
			select {
			case <-*hold:
			case <-time.After(time.Minute):
			}
		}
		io.WriteString(w, `{"status":"shipped"}`)
	}))
	t.Cleanup(fn.Close)
	allow := func(s *cli.LLMSettings) { s.AllowURLPrefixes = append(s.AllowURLPrefixes, fn.URL+"/") }
	c.convEnv = newConvEnv(t, nil, append([]func(*cli.LLMSettings){allow}, settings...)...)
	c.stand.Respond(orderModel)
	tool := map[string]any{"name": "lookup", "type": "custom_function", "http_method": "POST", "api_endpoint": fn.URL + "/orders",
		"custom_function_parameters": `{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`}
	c.agent = c.createAgent(t, map[string]any{"name": "Orders", "llm_config": c.llmConfig(map[string]any{"tools": []any{tool}})})
	c.id = c.start(t, c.agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	c.path = "/api/v1/conversations/" + c.id + "/messages"
	return c
}

// orderModel says it looks, calls the function, then answers with what it read.
func orderModel(r llmtest.Request) llmtest.Reply {
	if res := r.ToolResults(); len(res) > 0 {
		return llmtest.Text("Order A-1: " + res[0].Content)
	}
	return llmtest.Reply{Text: "Let me check.", ToolCalls: []llm.ToolCall{{ID: "call_o1", Name: "lookup", Arguments: `{"order_id":"A-1"}`}}}
}

// counts is what a repeat must not change: the model's requests, the function's hits
// and the user items stored.
type counts struct{ model, hits, users int }

func (c *orderConv) counts(t *testing.T) counts {
	t.Helper()
	r := c.Do("GET", "/api/v1/conversations/"+c.id, c.tok, nil)
	testkit.Expect(t, r, 200)
	users := 0
	for _, m := range r.Data()["messages"].([]any) {
		if m.(map[string]any)["role"] == data.ItemUser {
			users++
		}
	}
	return counts{model: len(c.stand.Requests()), hits: int(c.hits.Load()), users: users}
}

func (c *orderConv) expectCounts(t *testing.T, when string, want counts) {
	t.Helper()
	if got := c.counts(t); got != want {
		t.Errorf("%s: model requests, function hits, user items = %+v, want %+v", when, got, want)
	}
}

// The same message under the same key from the same token is answered once: the retry
// gets the first answer (status, body, ETag) with Idempotent-Replayed, and makes no user
// item, model request or function call; another body under the key is 422.
func TestConversationMessageReplayedUnderItsKey(t *testing.T) {
	c := newOrderConv(t)
	first := c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "m1")
	testkit.Expect(t, first, 200)
	if first.Header.Get("Idempotent-Replayed") != "" || len(first.Data()["items"].([]any)) != 4 {
		t.Fatalf("first answer: %s %v", first.Body, first.Header)
	}
	once := c.counts(t)
	if once != (counts{model: 2, hits: 1, users: 1}) {
		t.Fatalf("one turn: %+v", once)
	}
	again := c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "m1")
	testkit.Expect(t, again, 200)
	if again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, first.Body) ||
		again.Header.Get("ETag") != first.Header.Get("ETag") || again.Header.Get("Content-Type") != "application/json" {
		t.Errorf("retry: %s %v, want the first answer %s replayed", again.Body, again.Header, first.Body)
	}
	c.expectCounts(t, "after the retry", once)
	testkit.ExpectFields(t, c.Do("POST", c.path, c.tok, `{"content":"where is B-2?"}`, "Idempotency-Key", "m1"), "Idempotency-Key")
	c.expectCounts(t, "after another body", once)

	// Keys are per token: the owner's other key sending the same is a new message.
	other := c.TokenIn(c.Owner, c.Owner.WorkspaceID)
	fresh := c.Do("POST", c.path, other, orderMessage, "Idempotency-Key", "m1")
	testkit.Expect(t, fresh, 200)
	if fresh.Header.Get("Idempotent-Replayed") != "" {
		t.Error("another token's request was answered with the first token's")
	}
	c.expectCounts(t, "after another token's", counts{model: 4, hits: 2, users: 2})
}

// A replay makes the access checks a first request makes: a token that cannot see the
// conversation, or no longer can, gets 404 and not the answer kept under its key.
func TestConversationMessageReplayChecksAccess(t *testing.T) {
	c := newOrderConv(t)
	ws := c.Owner.WorkspaceID
	otherAgent := c.createAgent(t, map[string]any{"name": "Other"})
	limited := c.Member("limited@example.com", ws, data.RoleDeveloper, nil, []string{otherAgent})
	testkit.Expect(t, c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "m1"), 200)
	testkit.Expect(t, c.Do("POST", c.path, limited.Token, orderMessage, "Idempotency-Key", "m1"), 404)

	dev := c.Member("dev@example.com", ws, data.RoleDeveloper, nil, []string{c.agent})
	testkit.Expect(t, c.Do("POST", c.path, dev.Token, orderMessage, "Idempotency-Key", "m2"), 200)
	testkit.Expect(t, c.Do("PUT", "/api/v1/workspaces/"+ws+"/users/"+dev.ID, c.tok, map[string]any{"agent_ids": []string{otherAgent}}), 200)
	r := c.Do("POST", c.path, dev.Token, orderMessage, "Idempotency-Key", "m2")
	testkit.Expect(t, r, 404)
	if r.Header.Get("Idempotent-Replayed") != "" || strings.Contains(string(r.Body), "shipped") {
		t.Errorf("a token no longer allowed the agent got its answer replayed: %s", r.Body)
	}
}

// A streamed message under a key streams as it would without one (the first delta
// arrives while the turn is still being answered: the capture flushes); its retry gets
// the recorded stream back, and a retry asking for JSON is another request (422).
func TestConversationMessageStreamedUnderItsKey(t *testing.T) {
	c := newOrderConv(t)
	hold := make(chan struct{})
	c.hold.Store(&hold)
	resp := postStream(t, c.URL, c.path, c.tok, map[string]any{"content": "where is A-1?"}, "Idempotency-Key", "s1")
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var events []string
	var atDone *testkit.Response
	raw := readFrames(t, resp.Body, func(f sseFrame) {
		switch {
		case f.Event == "delta" && len(events) == 1:
			// The function is still held, so the turn cannot have ended: this delta
			// came through the capture's flush.
			close(hold)
		case f.Event == "done":
			// Sent again the moment the stream is read whole, before it is closed: the
			// answer was kept before its last frame went out, so this is its replay.
			atDone = c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "s1", "Accept", "text/event-stream")
		}
		events = append(events, f.Event)
	})
	if strings.Join(events, ",") != "item,delta,delta,delta,item,item,delta,delta,delta,item,done" {
		t.Fatalf("frames %v:\n%s", events, raw)
	}
	once := c.counts(t)
	again := c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "s1", "Accept", "text/event-stream")
	for _, r := range []*testkit.Response{atDone, again} {
		testkit.Expect(t, r, 200)
		if r.Header.Get("Idempotent-Replayed") != "true" || r.Header.Get("Content-Type") != "text/event-stream" || !bytes.Equal(r.Body, raw) {
			t.Errorf("streamed retry: %v\n%s\nwant the first stream\n%s", r.Header, r.Body, raw)
		}
	}
	testkit.ExpectFields(t, c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "s1"), "Idempotency-Key")
	c.expectCounts(t, "after the retries", once)

	// A JSON answer is not replayed to a request for the stream either.
	testkit.Expect(t, c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "j1"), 200)
	testkit.ExpectFields(t, c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "j1", "Accept", "text/event-stream"), "Idempotency-Key")
}

// A second request under a key whose first is still being answered (the model slow) is
// 409, and the message makes one turn.
func TestConversationMessageRetriedWhileAnswered(t *testing.T) {
	c := newOrderConv(t)
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	c.stand.Respond(func(r llmtest.Request) llmtest.Reply {
		if len(r.ToolResults()) == 0 {
			arrived <- struct{}{}
			<-release
		}
		return orderModel(r)
	})
	done := make(chan *testkit.Response)
	go func() { done <- c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "m1") }()
	<-arrived
	r := c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "m1")
	testkit.Expect(t, r, 409)
	if !strings.Contains(r.JSON()["message"].(string), "still in progress") {
		t.Errorf("retry while answered: %s", r.Body)
	}
	close(release)
	testkit.Expect(t, <-done, 200)
	c.expectCounts(t, "after both", counts{model: 2, hits: 1, users: 1})
}

// A message that fails (the provider's 502 or 504, a 422, an error frame ending a stream)
// keeps nothing under its key and stores no user item: the retry runs again and the
// transcript holds the message once.
func TestConversationMessageFailureNotKept(t *testing.T) {
	c := newOrderConv(t, func(s *cli.LLMSettings) { s.Timeout = 2 * time.Second })
	want := counts{}
	for _, f := range []struct {
		name   string
		reply  llmtest.Reply
		status int
	}{
		{"provider error", llmtest.Fail(500, "The server had an error"), 502},
		{"provider timeout", llmtest.Hang(), 504},
	} {
		key := "k-" + f.name
		c.stand.Queue(f.reply)
		testkit.Expect(t, c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", key), f.status)
		want.model++
		c.expectCounts(t, f.name, want)
		r := c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", key)
		testkit.Expect(t, r, 200)
		if r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("%s: the retry was replayed", f.name)
		}
		want.model, want.hits, want.users = want.model+2, want.hits+1, want.users+1
		c.expectCounts(t, f.name+" retried", want)
	}
	blank := c.Do("POST", c.path, c.tok, `{"content":"   "}`, "Idempotency-Key", "k-422")
	testkit.ExpectFields(t, blank, "content")
	if got := fmt.Sprint(blank.FieldErrors()["content"]); got != "[The content field must not be blank.]" {
		t.Errorf("a blank message is told %s", got) // it was given: not "required"
	}
	testkit.Expect(t, c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "k-422"), 200)
	want.model, want.hits, want.users = want.model+2, want.hits+1, want.users+1
	c.expectCounts(t, "a 422 fixed", want)

	// A stream that began and then failed answered 200, its error frame last: not kept.
	c.stand.Queue(llmtest.FailMidStream(500, "The server had an error"))
	var ends []string // each attempt's last frame
	for range 2 {
		resp := postStream(t, c.URL, c.path, c.tok, map[string]any{"content": "where is A-1?"}, "Idempotency-Key", "k-stream")
		last := ""
		readFrames(t, resp.Body, func(f sseFrame) { last = f.Event })
		resp.Body.Close()
		if resp.Header.Get("Idempotent-Replayed") != "" {
			t.Error("the retry of a failed stream was replayed")
		}
		ends = append(ends, last)
	}
	if strings.Join(ends, ",") != "error,done" {
		t.Errorf("a failed stream and its retry ended with %v, want error, done", ends)
	}
	want.model, want.hits, want.users = want.model+1+2, want.hits+1, want.users+1
	c.expectCounts(t, "a failed stream retried", want)
}

// messageClaim is the context the server gives a message sent under key: the caller
// and the claim its first change writes (status 0 for a stream, as for a first request).
func messageClaim(t *testing.T, c *orderConv, key, body string, streamed bool) context.Context {
	t.Helper()
	p, err := c.Svc.Auth.Authenticate(context.Background(), c.tok)
	if err != nil {
		t.Fatal(err)
	}
	id := tokenIDOf(t, c.tok)
	head, status := "POST "+c.path+"\n", http.StatusOK
	if streamed {
		head, status = head+"Accept: text/event-stream\n", 0
	}
	sum := sha256.Sum256([]byte(head + body))
	return data.WithIdempotencyClaim(data.WithPrincipal(context.Background(), p),
		&data.IdempotencyClaim{ID: key + "-claim", TokenID: id, Key: key, RequestHash: hex.EncodeToString(sum[:]), Status: status})
}

// The claim commits with the turn (the user's item with it): a retry after a crash that
// lost the answer gets the turn (JSON), or is told the message was carried out (a
// stream, which cannot be rebuilt); never a second turn. The lease alone keeps no claim,
// so a failed answer's retry runs again.
func TestConversationMessageClaimCommitsWithTheTurn(t *testing.T) {
	c := newOrderConv(t)
	turn, err := c.Svc.Conversations.SendMessage(messageClaim(t, c, "crash", orderMessage, false), c.id, data.ConversationMessage{Content: "where is A-1?"}, data.ConversationObserver{})
	if err != nil {
		t.Fatal(err)
	}
	once := c.counts(t)
	r := c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "crash")
	testkit.Expect(t, r, 200)
	if r.Header.Get("Idempotent-Replayed") != "true" || len(r.Data()["items"].([]any)) != len(turn.Items) || r.Header.Get("ETag") == "" {
		t.Errorf("retry after the crash: %s %v", r.Body, r.Header)
	}
	c.expectCounts(t, "after the retry", once)

	ctx := messageClaim(t, c, "crash-stream", orderMessage, true)
	if _, err := c.Svc.Conversations.SendMessage(ctx, c.id, data.ConversationMessage{Content: "where is A-1?"}, data.ConversationObserver{}); err != nil {
		t.Fatal(err)
	}
	once = c.counts(t)
	r = c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "crash-stream", "Accept", "text/event-stream")
	testkit.Expect(t, r, 409)
	if !strings.Contains(r.JSON()["message"].(string), "carried out") {
		t.Errorf("a streamed retry after the crash: %s", r.Body)
	}
	c.expectCounts(t, "after the streamed retry", once)

	// A provider's failure under a claim leaves no claim: the lease was no change.
	c.stand.Queue(llmtest.Fail(500, "The server had an error"))
	if _, err := c.Svc.Conversations.SendMessage(messageClaim(t, c, "failed", orderMessage, false), c.id, data.ConversationMessage{Content: "where is A-1?"}, data.ConversationObserver{}); data.ErrorCode(err) != data.EPROVIDER {
		t.Fatalf("a failed answer: %v", err)
	}
	tokenID := tokenIDOf(t, c.tok)
	if kept, err := c.Svc.Idempotency.IdempotentResponse(context.Background(), tokenID, "failed"); err != nil || kept != nil {
		t.Errorf("a failed answer kept %+v, %v", kept, err)
	}
	testkit.Expect(t, c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "failed"), 200)
}

// Two requests under one key sent at once to two replicas: the one whose lease comes
// after the other's turn sees that turn's claim and stops before calling the model.
func TestConversationMessageClaimedMeanwhile(t *testing.T) {
	c := newOrderConv(t)
	testkit.Expect(t, c.Do("POST", c.path, c.tok, orderMessage, "Idempotency-Key", "race"), 200)
	before := c.counts(t)
	_, err := c.Svc.Conversations.SendMessage(messageClaim(t, c, "race", orderMessage, false), c.id, data.ConversationMessage{Content: "where is A-1?"}, data.ConversationObserver{})
	if data.ErrorCode(err) != data.ECONFLICT || !strings.Contains(err.Error(), "at the same time") {
		t.Errorf("the late twin: %v", err)
	}
	c.expectCounts(t, "after the late twin", before)
}

// A turn that ends its conversation commits with its call, and its claim keeps the turn
// as the end stores it (status ended, the call's id, its text redacted): the retry after
// a crash gets it in full.
func TestConversationMessageClaimKeepsAnEndingTurn(t *testing.T) {
	c := newOrderConv(t)
	agent := c.createAgent(t, map[string]any{"name": "Bye", "llm_config": c.llmConfig(map[string]any{"tools": []any{
		map[string]any{"name": "hang_up", "type": "end_call"}}})})
	c.id = c.start(t, agent, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	c.path = "/api/v1/conversations/" + c.id + "/messages"
	c.stand.Queue(llmtest.Reply{Text: "Goodbye!", ToolCalls: []llm.ToolCall{{ID: "call_end1", Name: "hang_up", Arguments: "{}"}}})
	const bye = `{"content":"bye"}`
	turn, err := c.Svc.Conversations.SendMessage(messageClaim(t, c, "bye", bye, false), c.id, data.ConversationMessage{Content: "bye"}, data.ConversationObserver{})
	if err != nil || turn.CallID == nil {
		t.Fatalf("the ending turn: %+v, %v", turn, err)
	}
	asked := len(c.stand.Requests())
	r := c.Do("POST", c.path, c.tok, bye, "Idempotency-Key", "bye")
	testkit.Expect(t, r, 200)
	got := r.Data()
	if r.Header.Get("Idempotent-Replayed") != "true" || got["status"] != data.ConversationEnded || got["call_id"] != *turn.CallID ||
		got["disconnection_reason"] != data.EndAgentEnded {
		t.Errorf("retry after the crash: %s, want the turn that ended the conversation with call %s", r.Body, *turn.CallID)
	}
	if conv := c.Do("GET", "/api/v1/conversations/"+c.id, c.tok, nil).Data(); conv["call_id"] != *turn.CallID {
		t.Errorf("the conversation's call %v, the turn's %s", conv["call_id"], *turn.CallID)
	}
	if n := len(c.stand.Requests()) - asked; n != 0 {
		t.Errorf("the retry asked the model %d times", n)
	}
}
