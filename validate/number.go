package validate

import (
	"regexp"

	"github.com/voiceapi/voiceapi/data"
)

// Bounds of a number (docs/numbers.md).
const MaxNicknameLen = 255

// e164 is an international number: "+", a non-zero country digit, at most 15 digits.
var e164 = regexp.MustCompile(`^\+[1-9]\d{1,14}$`)

// E164 reports whether s is an E.164 phone number.
func E164(s string) bool { return e164.MatchString(s) }

func agentRef(errs *Errors, path string, id *string) {
	if id != nil && !data.ValidID(data.PrefixAgent, *id) {
		errs.Addf(path, "The %s field must be an agent of this workspace.", path)
	}
}

// NumberCreate checks a new number; whether bound agents belong to the workspace and the
// number is free is checked in the write transaction.
func NumberCreate(in data.NumberCreate) error {
	var errs Errors
	if in.PhoneNumber == "" {
		errs.Required("phone_number")
	} else {
		errs.Match("phone_number", in.PhoneNumber, e164, "an E.164 number such as +14155550123")
	}
	errs.MaxLen("nickname", in.Nickname, MaxNicknameLen)
	if in.Provider == "" {
		errs.Required("provider")
	} else {
		errs.OneOf("provider", in.Provider, data.NumberProviders...)
	}
	agentRef(&errs, "inbound_agent_id", in.InboundAgentID)
	agentRef(&errs, "outbound_agent_id", in.OutboundAgentID)
	Variables(&errs, "variables", in.Variables)
	return errs.Err()
}

// NumberUpdate checks a change of a number; the phone number itself cannot change.
func NumberUpdate(in data.NumberUpdate) error {
	var errs Errors
	if in.Nickname.Set {
		errs.MaxLen("nickname", in.Nickname.V, MaxNicknameLen)
	}
	if in.Provider.Set {
		errs.OneOf("provider", in.Provider.V, data.NumberProviders...)
	}
	if in.InboundAgentID.Set {
		agentRef(&errs, "inbound_agent_id", in.InboundAgentID.V)
	}
	if in.OutboundAgentID.Set {
		agentRef(&errs, "outbound_agent_id", in.OutboundAgentID.V)
	}
	if in.Variables.Set {
		Variables(&errs, "variables", in.Variables.V)
	}
	return errs.Err()
}

// NumberFilter checks the numbers list's search: no longer than a nickname, the longest
// thing it can find.
func NumberFilter(f data.NumberFilter) error {
	var errs Errors
	errs.MaxLen("q", f.Q, MaxNicknameLen)
	return errs.Err()
}
