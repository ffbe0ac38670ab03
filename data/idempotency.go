package data

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
)

// IdempotentResponse is a successful response kept for replay under an Idempotency-Key.
type IdempotentResponse struct {
	RequestHash string            `json:"request_hash"`
	Status      int               `json:"status"`
	Header      map[string]string `json:"header"`
	Body        []byte            `json:"body"`
	CreatedAt   Time              `json:"created_at"`
	// ClaimID names the request whose claim this is (IdempotencyClaim.ID); empty once
	// the full response replaced the claim.
	ClaimID string `json:"claim_id,omitempty"`
	// AgentID is the agent the request acted on (see NoteClaimAgent), which a replay
	// checks the caller may still see; "" for a request about no one agent, and for a
	// response kept by a release before it was noted.
	AgentID string `json:"agent_id,omitempty"`
	// ConversationID is the conversation a message was sent to (see NoteConversation):
	// its end deletes the response, whose body holds the turn as it was answered, before
	// redaction; "" for any other request.
	ConversationID string `json:"conversation_id,omitempty"`
	// StartedConversationID is the conversation a conversation's start made: its end
	// brings the kept answer (the conversation as started) under the redaction in force
	// then, as it does the conversation; "" for any other request.
	StartedConversationID string `json:"started_conversation_id,omitempty"`
	// WorkspaceID is the workspace the request acted in (Principal.WorkspaceID: a path's
	// {workspace_id}, else the token's): the workspace's delete, and a member's removal
	// from it, take the answers kept for requests made in it, under any token. "" for a
	// response kept by a release before it was noted, which expires within the day.
	WorkspaceID string `json:"workspace_id,omitempty"`
}

// KeptResponse is a response kept under an Idempotency-Key, with its token and key.
type KeptResponse struct {
	TokenID  int64
	Key      string
	Response *IdempotentResponse
}

// IdempotencyStore keeps responses per token and key for 24 hours (conventions §17).
type IdempotencyStore interface {
	IdempotentResponse(ctx context.Context, tokenID int64, key string) (*IdempotentResponse, error)
	SaveIdempotentResponse(ctx context.Context, tokenID int64, key string, resp *IdempotentResponse) error
	// CheckReplayAgent is the access check a replay makes of the agent its first request
	// acted on: the caller's workspace's agent, within the caller's agent_ids; a not-found
	// error otherwise, as a first request would have been answered.
	CheckReplayAgent(ctx context.Context, agentID string) error
	// CheckReplayCall tells whether the call a kept answer shows (a registration's, a
	// start's) is still in the caller's workspace: a conflict error once it was deleted,
	// whose answer is not replayed.
	CheckReplayCall(ctx context.Context, callID string) error
}

// CallDeletedReplay is the refusal of a replay whose call was deleted since.
const CallDeletedReplay = "A call with this Idempotency-Key was carried out and has since been deleted; its answer is not replayed and the call is not made again."

// IdempotencyClaim is a request under an Idempotency-Key whose outcome is not known yet.
// The service layer writes it in the same transaction as the request's first change, so a
// crash between that commit and the saving of the response cannot let a retry make the
// change twice.
type IdempotencyClaim struct {
	// ID is unique to the request: two requests sent with one key at once (to two
	// replicas) claim it with different ids, and the one that finds the other's claim
	// stored undoes its change.
	ID          string
	TokenID     int64
	Key         string
	RequestHash string
	// Status is the status the route answers on success, kept with the record a create
	// made so that a retry after a crash can be answered in full.
	Status int

	answer                *ClaimAnswer
	agentID               string
	conversationID        string
	startedConversationID string
	answerKept            bool
}

// ClaimAnswer is what a request answers: {"data": Record} and the top-level Extra members
// (an API key's token, a webhook's secret), as RecordBody writes them. NoETag marks an
// answer that is not a single record (an action's 202), which carries no ETag.
type ClaimAnswer struct {
	Record any
	Extra  map[string]any
	NoETag bool
}

// SetAnswer keeps what the request will answer if its change commits, for the claim
// written in that change's transaction (a write that runs again sets it again).
func (c *IdempotencyClaim) SetAnswer(record any, extra map[string]any) {
	c.answer = &ClaimAnswer{Record: record, Extra: extra}
}

// SetActionAnswer is SetAnswer for an action whose answer {"data": v} is not a single
// record, and so carries no ETag (a webhook test, replay or delivery retry).
func (c *IdempotencyClaim) SetActionAnswer(v any) {
	c.answer = &ClaimAnswer{Record: v, NoETag: true}
}

// Answer is what SetAnswer kept, nil when nothing was.
func (c *IdempotencyClaim) Answer() *ClaimAnswer { return c.answer }

// KeepAnswer makes the claim's answer (SetAnswer) the response kept for replay, in place
// of what the server writes: a conversation's start answers its caller as given, and
// keeps its answer redacted, as the conversation's end will keep the conversation.
func (c *IdempotencyClaim) KeepAnswer() {
	if c != nil {
		c.answerKept = true
	}
}

// AnswerKept reports whether KeepAnswer was called: the server then keeps nothing over
// the claim (false for a nil claim).
func (c *IdempotencyClaim) AnswerKept() bool { return c != nil && c.answerKept }

// NoteAgent notes the agent the request acted on, for the claim and the response kept
// under its key: a replay re-checks the caller's access to it. A nil claim notes nothing.
func (c *IdempotencyClaim) NoteAgent(agentID string) {
	if c != nil {
		c.agentID = agentID
	}
}

// AgentID is the agent NoteAgent noted, "" when none was (or the claim is nil).
func (c *IdempotencyClaim) AgentID() string {
	if c == nil {
		return ""
	}
	return c.agentID
}

// NoteConversation notes the conversation a message was sent to, for the claim and the
// response kept under its key: the conversation's end deletes them. A nil claim notes
// nothing.
func (c *IdempotencyClaim) NoteConversation(conversationID string) {
	if c != nil {
		c.conversationID = conversationID
	}
}

// ConversationID is the conversation NoteConversation noted, "" when none was (or the
// claim is nil).
func (c *IdempotencyClaim) ConversationID() string {
	if c == nil {
		return ""
	}
	return c.conversationID
}

// NoteStartedConversation notes the conversation a start made, for the response kept
// under its key: the conversation's end redacts that response as it redacts the
// conversation. A nil claim notes nothing.
func (c *IdempotencyClaim) NoteStartedConversation(conversationID string) {
	if c != nil {
		c.startedConversationID = conversationID
	}
}

// StartedConversationID is the conversation NoteStartedConversation noted, "" when none
// was (or the claim is nil).
func (c *IdempotencyClaim) StartedConversationID() string {
	if c == nil {
		return ""
	}
	return c.startedConversationID
}

// NoteClaimAgent notes on the request's claim, when ctx carries one, the agent the
// request acted on. A service calls it where it has checked the caller's access to that
// agent, before the request's first change commits (the claim is written with it).
func NoteClaimAgent(ctx context.Context, agentID string) {
	IdempotencyClaimFrom(ctx).NoteAgent(agentID)
}

// RecordBody is the body of a single-record response (conventions §1): {"data": raw}
// with the extra members after it in sorted order, and a newline; raw is json.Marshal's
// encoding of the record. The envelope is written around raw rather than marshalled with
// it: encoding/json would validate and compact raw all over again.
func RecordBody(raw []byte, extra map[string]any) ([]byte, error) {
	body := make([]byte, 0, len(raw)+64)
	body = append(body, `{"data":`...)
	body = append(body, raw...)
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		kv, err := json.Marshal(map[string]any{k: extra[k]})
		if err != nil {
			return nil, err
		}
		body = append(body, ',')
		body = append(body, kv[1:len(kv)-1]...)
	}
	return append(body, "}\n"...), nil
}

// WithIdempotencyClaim returns ctx carrying the request's claim.
func WithIdempotencyClaim(ctx context.Context, c *IdempotencyClaim) context.Context {
	return context.WithValue(ctx, idempotencyClaimKey{}, c)
}

// WithoutIdempotencyClaim returns ctx carrying no claim, for the writes of a request that
// are not its change (a conversation's lease: only the turn it stores is the message's).
func WithoutIdempotencyClaim(ctx context.Context) context.Context {
	if IdempotencyClaimFrom(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, idempotencyClaimKey{}, (*IdempotencyClaim)(nil))
}

// IdempotencyClaimFrom returns the claim ctx carries, nil when there is none.
func IdempotencyClaimFrom(ctx context.Context) *IdempotencyClaim {
	c, _ := ctx.Value(idempotencyClaimKey{}).(*IdempotencyClaim)
	return c
}

type idempotencyClaimKey struct{}
