package data

import (
	"context"
	"encoding/json"
	"strings"
)

// Number providers (conventions §10).
const (
	ProviderTwilio = "twilio"
	ProviderTelnyx = "telnyx"
	ProviderVonage = "vonage"
	ProviderSIP    = "sip"
)

// NumberProviders lists every provider a number may name.
var NumberProviders = []string{ProviderTwilio, ProviderTelnyx, ProviderVonage, ProviderSIP}

// Number is a phone number of a workspace and the agents that answer and place its calls.
// Numbers hold no provider credentials: the voice runtime owns the trunk, so there is no
// secret to encrypt (conventions §9).
type Number struct {
	ID              string  `json:"id"`
	WorkspaceID     string  `json:"workspace_id"`
	PhoneNumber     string  `json:"phone_number"`
	Nickname        string  `json:"nickname"`
	Provider        string  `json:"provider"`
	InboundAgentID  *string `json:"inbound_agent_id"`
	OutboundAgentID *string `json:"outbound_agent_id"`
	// Variables fill {{name}} references of the calls this number routes, over the
	// agent's default_variables and under the call's own (conventions §23).
	Variables map[string]any `json:"variables"`
	CreatedAt Time           `json:"created_at"`
	UpdatedAt Time           `json:"updated_at"`
	// Access is what the caller who read it may do with it (the service decides,
	// fillNumberAccess), answered beside the record, never in it.
	Access NumberAccess `json:"-"`
}

// MarshalJSON shows variables as {} when absent (numbers stored before they existed).
func (n Number) MarshalJSON() ([]byte, error) {
	type plain Number
	if n.Variables == nil {
		n.Variables = map[string]any{}
	}
	return json.Marshal(plain(n))
}

// NumberCreate is the body of POST /api/v1/numbers.
type NumberCreate struct {
	RecordReadOnly
	PhoneNumber     string         `json:"phone_number"`
	Nickname        string         `json:"nickname"`
	Provider        string         `json:"provider"`
	InboundAgentID  *string        `json:"inbound_agent_id"`
	OutboundAgentID *string        `json:"outbound_agent_id"`
	Variables       map[string]any `json:"variables"`
}

// NumberUpdate is the body of PUT /api/v1/numbers/{number_id}. The agent ids are nullable: a
// given null unbinds, an absent member keeps the binding.
type NumberUpdate struct {
	RecordReadOnly
	PhoneNumber     ReadOnly     `json:"phone_number,omitzero" strict:"readonly"`
	Nickname        Opt[string]  `json:"nickname"`
	Provider        Opt[string]  `json:"provider"`
	InboundAgentID  Opt[*string] `json:"inbound_agent_id"`
	OutboundAgentID Opt[*string] `json:"outbound_agent_id"`
	// Variables, given, replaces the stored map whole. Not nullable: the tag refuses the
	// null a map would take as nil ({} empties it).
	Variables Opt[map[string]any] `json:"variables" strict:"nonnull"`
}

// NumberFilter narrows a list of numbers.
type NumberFilter struct {
	// AgentID keeps numbers bound to the agent, inbound or outbound; "" keeps all.
	AgentID string
	// Q keeps numbers whose nickname contains it, ignoring case, or whose phone_number
	// contains its digits when it is written as a number (NumberSearchDigits); "" keeps all.
	Q string
}

// MaxNumberSearchScan bounds the numbers a page of a q search looks at, on either storage
// engine (docs/numbers.md): a search matching few of a large workspace's numbers answers
// promptly, a short page with a cursor on.
const MaxNumberSearchScan = 5000

// NumberSearchDigits returns the digits of q when q is written as a phone number or part
// of one (digits with any "+", spaces, dots, dashes or parentheses), else "": "+1 415"
// finds +14155550123. The one reading of a numbers search, for both storage engines.
func NumberSearchDigits(q string) string {
	var digits []byte
	for i := 0; i < len(q); i++ {
		switch c := q[i]; {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
		case c == '+' || c == ' ' || c == '.' || c == '-' || c == '(' || c == ')':
		default:
			return ""
		}
	}
	return string(digits)
}

// NumberMatches reports whether n is kept by the search q (NumberFilter.Q), as the
// PostgreSQL query reads it too.
func NumberMatches(n *Number, q string) bool {
	if q == "" {
		return true
	}
	if d := NumberSearchDigits(q); d != "" && strings.Contains(n.PhoneNumber, d) {
		return true
	}
	return strings.Contains(FoldCase(n.Nickname), FoldCase(q))
}

// NumberService manages the phone numbers of the caller's workspace.
type NumberService interface {
	// ListNumbers lists numbers, newest first. Errors: validation_failed (cursor).
	ListNumbers(ctx context.Context, f NumberFilter, p PageRequest) ([]*Number, Page, error)
	// CreateNumber registers a number. Errors: validation_failed (a bound agent outside the
	// workspace), conflict (the number is registered anywhere), quota_exceeded (numbers).
	CreateNumber(ctx context.Context, in NumberCreate) (*Number, error)
	// Number returns one number. Errors: not_found.
	Number(ctx context.Context, id string) (*Number, error)
	// UpdateNumber changes nickname, provider or bindings. Errors: not_found,
	// validation_failed, precondition_failed.
	UpdateNumber(ctx context.Context, id string, in NumberUpdate) (*Number, error)
	// DeleteNumber removes a number of the current workspace. Errors: not_found,
	// precondition_failed.
	DeleteNumber(ctx context.Context, id string) error
}
