package data

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// Conversation statuses (conventions §21).
const (
	ConversationActive = "active"
	ConversationEnded  = "ended"
)

// Why a conversation ended: its call's disconnection_reason (conventions §21).
const (
	EndUserEnded   = "user_ended"
	EndAgentEnded  = "agent_ended"
	EndTransferred = "transferred"
	EndMaxTurns    = "max_turns"
	EndExpired     = "expired"
)

// Conversation item roles.
const (
	ItemAgent = "agent"
	ItemUser  = "user"
	ItemTool  = "tool"
)

// Conversation limits (conventions §21).
const (
	// ConversationIdleTimeout ends a conversation nobody wrote to for that long (expired).
	ConversationIdleTimeout = 30 * time.Minute
	// ConversationMaxAgentTurns is how many user messages the agent answers; the last
	// answer ends the conversation (max_turns).
	ConversationMaxAgentTurns = 100
	// ConversationAnswerLimit bounds the answer to one message (model calls and tools
	// together); the lease a message holds spans one step of it, renewed at each.
	ConversationAnswerLimit = 5 * time.Minute
	// DefaultMaxOpenConversations is how many conversations a workspace may hold open at
	// once (active and not expired) unless the operator says otherwise
	// (--max-open-conversations): each message is a paid model call.
	DefaultMaxOpenConversations = 100
)

// Conversation is a text conversation with an agent (conventions §21). AgentVersion is
// nil for a conversation with the draft.
type Conversation struct {
	ID           string             `json:"id"`
	WorkspaceID  string             `json:"workspace_id"`
	AgentID      string             `json:"agent_id"`
	AgentVersion *int               `json:"agent_version"`
	Status       string             `json:"status"`
	Variables    map[string]any     `json:"variables"`
	Messages     []ConversationItem `json:"messages"`
	Usage        TokenUsage         `json:"usage"`
	// AgentTurns counts the user messages the agent answered (at most
	// ConversationMaxAgentTurns).
	AgentTurns          int     `json:"agent_turns"`
	DisconnectionReason *string `json:"disconnection_reason"`
	// CallID is the call the conversation became when it ended; nil while active.
	CallID    *string `json:"call_id"`
	CreatedAt Time    `json:"created_at"`
	UpdatedAt Time    `json:"updated_at"`
	EndedAt   *Time   `json:"ended_at"`
}

// ConversationFilter selects the conversations of GET /api/v1/conversations: of one
// agent, in one status; "" selects any.
type ConversationFilter struct {
	AgentID string
	Status  string
}

// ConversationSummary is a conversation as a list shows it: the record without its
// messages, so that a page stays small (the show route has them).
type ConversationSummary struct {
	ID                  string         `json:"id"`
	WorkspaceID         string         `json:"workspace_id"`
	AgentID             string         `json:"agent_id"`
	AgentVersion        *int           `json:"agent_version"`
	Status              string         `json:"status"`
	Variables           map[string]any `json:"variables"`
	Usage               TokenUsage     `json:"usage"`
	AgentTurns          int            `json:"agent_turns"`
	DisconnectionReason *string        `json:"disconnection_reason"`
	CallID              *string        `json:"call_id"`
	CreatedAt           Time           `json:"created_at"`
	UpdatedAt           Time           `json:"updated_at"`
	EndedAt             *Time          `json:"ended_at"`
}

// Summary is c without its messages.
func (c *Conversation) Summary() *ConversationSummary {
	return &ConversationSummary{ID: c.ID, WorkspaceID: c.WorkspaceID, AgentID: c.AgentID, AgentVersion: c.AgentVersion,
		Status: c.Status, Variables: c.Variables, Usage: c.Usage, AgentTurns: c.AgentTurns,
		DisconnectionReason: c.DisconnectionReason, CallID: c.CallID, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, EndedAt: c.EndedAt}
}

// StoredConversation is a conversation as storage keeps it: the record without its
// messages (stored apart, appended turn by turn), the caller who started it and the
// lease of the message being answered.
type StoredConversation struct {
	Conversation
	// Items is how many messages are stored.
	Items int `json:"items"`
	// StartedBy is the user who started the conversation.
	StartedBy string `json:"started_by"`
	// Lease is held while a message is answered, so that two messages of one conversation
	// never interleave, on any replica; nil when none is.
	Lease *ConversationLease `json:"lease"`
}

// ConversationLease marks a message being answered: Token names the request holding it,
// Until is when it lapses (a replica that died mid-answer frees it then).
type ConversationLease struct {
	Token string `json:"token"`
	Until Time   `json:"until"`
}

// ConversationItem is one message of a conversation: a user's, the agent's (one model
// reply; its text may be empty when it only called tools) or a tool's result.
type ConversationItem struct {
	Role     string        `json:"role"`
	Content  string        `json:"content"`
	ToolCall *ToolCallItem `json:"tool_call"`
	// Knowledge holds the chunks retrieved for the user turn this agent item answers
	// (on the turn's first agent item only).
	Knowledge []KnowledgeRef `json:"knowledge"`
	LatencyMS *TurnLatency   `json:"latency_ms"`
	Usage     *TokenUsage    `json:"usage"`
	CreatedAt Time           `json:"created_at"`
}

// ToolCallItem is a tool call the model made and what came of it. Arguments is the JSON
// the model wrote, decoded (or the raw text when it was not JSON).
type ToolCallItem struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments any    `json:"arguments"`
	Result    any    `json:"result"`
	// Error is true when the call failed (unknown tool, arguments that fail the schema, a
	// custom function that could not be reached): Result then holds {"error": …}.
	Error bool `json:"error"`
}

// KnowledgeRef is a retrieved chunk as an agent item shows it.
type KnowledgeRef struct {
	KnowledgeBaseID string  `json:"knowledge_base_id"`
	SourceID        string  `json:"source_id"`
	Text            string  `json:"text"`
	Score           float64 `json:"score"`
}

// TurnLatency is a model reply's time to its first token and to its end.
type TurnLatency struct {
	FirstToken int64 `json:"first_token"`
	Total      int64 `json:"total"`
}

// TokenUsage counts a model's tokens.
type TokenUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add returns the sum of two usages.
func (u TokenUsage) Add(o TokenUsage) TokenUsage {
	return TokenUsage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens}
}

// Conversation versions a start may name besides a number.
const (
	ConversationLive  = "live"
	ConversationDraft = "draft"
)

// ConversationStart is the body of POST /api/v1/agents/{agent_id}/conversations. Version
// is "live" (the default), "draft" or a version number.
type ConversationStart struct {
	Version   ConversationVersion `json:"version"`
	Variables map[string]any      `json:"variables"`
}

// ConversationVersion is "live", "draft" or a version number; the zero value is live.
type ConversationVersion struct {
	Draft  bool
	Number int // 0 when live or draft
}

// ConversationMessage is the body of POST /api/v1/conversations/{conversation_id}/messages.
type ConversationMessage struct {
	Content string `json:"content"`
}

// ConversationTurn is what a message added: its items, the turn's usage, and the
// conversation's status after it (a tool or the turn limit may have ended it, and then
// CallID names the call it became).
type ConversationTurn struct {
	ConversationID      string             `json:"conversation_id"`
	Items               []ConversationItem `json:"items"`
	Usage               TokenUsage         `json:"usage"`
	Status              string             `json:"status"`
	DisconnectionReason *string            `json:"disconnection_reason"`
	CallID              *string            `json:"call_id"`
}

// ConversationObserver receives a reply as it is made: Text each piece of the agent's
// text, Item each item once complete (a user's message, each agent reply, each tool's
// result). An error from either stops the reply. Either may be nil.
type ConversationObserver struct {
	Text func(delta string) error
	Item func(item *ConversationItem) error
}

// ConversationService runs conversations with agents in the caller's workspace. A
// conversation of another workspace, or of an agent outside the caller's agent_ids, is
// not_found; a draft conversation needs the right to write agents.
type ConversationService interface {
	// StartConversation starts a conversation on the agent's live version, a version or
	// its draft; when the agent speaks first, its opening is in Messages. Errors:
	// not_found (agent), forbidden (draft without the right to write agents),
	// conflict (live on an agent never published), validation_failed (variables, a
	// version the agent lacks),
	// missing_variables, provider_error, provider_timeout (a dynamic welcome message).
	StartConversation(ctx context.Context, agentID string, in ConversationStart, obs ConversationObserver) (*Conversation, error)
	// Conversation returns one conversation with its messages. Errors: not_found.
	Conversation(ctx context.Context, id string) (*Conversation, error)
	// ListConversations returns one newest-first page of the conversations f selects
	// that the caller may see (the rule of Conversation), without their messages.
	// Errors: validation_failed (the filters, the page).
	ListConversations(ctx context.Context, f ConversationFilter, req PageRequest) ([]*ConversationSummary, Page, error)
	// SendMessage adds a user message and returns the turn: the items it added (the
	// message, the agent's replies, the tools' results) and whether it ended the
	// conversation. Nothing is stored when it fails. Errors:
	// not_found, validation_failed (content), conflict (the conversation has ended, or
	// another message is being answered), provider_error, provider_timeout.
	SendMessage(ctx context.Context, id string, in ConversationMessage, obs ConversationObserver) (*ConversationTurn, error)
	// EndConversation ends the conversation (user_ended) and returns the call it became;
	// a conversation already ended returns its call. Errors: not_found, conflict (another
	// message is being answered).
	EndConversation(ctx context.Context, id string) (*Call, error)
}

// UnmarshalJSON reads "live", "draft" or a version number of at least 1.
func (v *ConversationVersion) UnmarshalJSON(b []byte) error {
	switch s := string(b); s {
	case `"live"`:
		*v = ConversationVersion{}
		return nil
	case `"draft"`:
		*v = ConversationVersion{Draft: true}
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil || n < 1 {
		return errors.New(`it must be "live", "draft" or a version number of at least 1`)
	}
	*v = ConversationVersion{Number: n}
	return nil
}

// MarshalJSON writes "live", "draft" or the number.
func (v ConversationVersion) MarshalJSON() ([]byte, error) {
	switch {
	case v.Draft:
		return []byte(`"draft"`), nil
	case v.Number > 0:
		return []byte(strconv.Itoa(v.Number)), nil
	}
	return []byte(`"live"`), nil
}
