package validate

import (
	"encoding/json"
	"net/url"
	"sort"

	"github.com/voiceapi/voiceapi/data"
)

// Bounds of a conversation (docs/conversations.md). A message fits one transcript item of
// the call the conversation becomes.
const (
	MaxConversationMessage   = MaxTranscriptContent // characters of one user message
	MaxConversationVariables = 100                  // variables given at the start
	MaxVariableValue         = MaxText              // characters of one string value
)

// ConversationStart checks the body of a conversation's start: each variable's name
// follows the tool-name pattern and its value is a string, a number or a boolean; at most
// MaxConversationVariables of them, MaxObjectBytes encoded.
func ConversationStart(in data.ConversationStart) error {
	var errs Errors
	Variables(&errs, "variables", in.Variables)
	return errs.Err()
}

// Variables checks a map of {{variables}} at path (conventions §23), names in order.
func Variables(errs *Errors, path string, vars map[string]any) {
	if len(vars) > MaxConversationVariables {
		errs.Addf(path, "The %s field must not have more than %d variables.", path, MaxConversationVariables)
		return
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := Join(path, k)
		if len(k) > MaxIdentifier || !validName(k) {
			errs.Addf(p, "The variable name %q must match ^[a-zA-Z_-][a-zA-Z0-9_-]*$ and be at most %d characters.", k, MaxIdentifier)
			continue
		}
		switch v := vars[k].(type) {
		case string:
			errs.MaxLen(p, v, MaxVariableValue)
		case bool:
		case float64, json.Number:
			if _, ok := data.NumberFloat(v); !ok {
				errs.Addf(p, "The %s field must be a finite number.", p)
			}
		default:
			errs.Addf(p, "The %s field must be a string, a number or a boolean.", p)
		}
	}
	if b, err := json.Marshal(vars); err == nil && len(b) > MaxObjectBytes {
		errs.Addf(path, "The %s field must not be greater than %d bytes encoded.", path, MaxObjectBytes)
	}
}

// ConversationMessage checks a user message: not blank, at most MaxConversationMessage
// characters.
func ConversationMessage(in data.ConversationMessage) error {
	var errs Errors
	errs.NotBlank("content", in.Content)
	errs.MaxLen("content", in.Content, MaxConversationMessage)
	return errs.Err()
}

// ConversationStatuses are the values of a conversation list's status filter.
var ConversationStatuses = []string{data.ConversationActive, data.ConversationEnded}

// ConversationFilterParams reads the filters of GET /api/v1/conversations, naming every
// bad parameter; one given empty is refused, as the other lists' are (read as absent,
// it would widen the list unseen).
func ConversationFilterParams(q url.Values) (data.ConversationFilter, error) {
	var errs Errors
	f := data.ConversationFilter{
		AgentID: idParam(&errs, q, "agent_id", data.PrefixAgent, "an agent"),
		Status:  enumParam(&errs, q, "status", ConversationStatuses),
	}
	return f, errs.Err()
}

// ConversationFilter checks a conversation list's filters (a caller of the service that
// did not read them from a query: the console, tests).
func ConversationFilter(f data.ConversationFilter) error {
	return agentStatusFilter(f.AgentID, f.Status, ConversationStatuses)
}
