package validate

import (
	"time"
	_ "time/tzdata" // timezones are checked the same on every machine, with or without zoneinfo

	"github.com/voiceapi/voiceapi/data"
)

// Bounds of the call-start contract (docs/runtime.md) and of the agent's settings it reads.
const (
	// MaxConcurrentCalls bounds an agent's max_concurrent_calls.
	MaxConcurrentCalls = 100_000
	// MaxRolloutVariants bounds the variants of a rollout.
	MaxRolloutVariants = 10
	// MaxRolloutMinCalls bounds a rollback's min_calls.
	MaxRolloutMinCalls = 1_000_000
)

// Timezone checks an IANA time zone name at path: known to the Go time zone database,
// and not "Local" (which names the server's own zone and so means nothing to a client).
func Timezone(errs *Errors, path, tz string) {
	if tz == "" || tz == "Local" || len(tz) > MaxIdentifier {
		errs.Addf(path, "The %s field must be an IANA time zone name such as Europe/Paris or UTC.", path)
		return
	}
	if _, err := time.LoadLocation(tz); err != nil {
		errs.Addf(path, "The %s field must be an IANA time zone name such as Europe/Paris or UTC; %q is unknown.", path, tz)
	}
}

// promptVariables checks prompt_config's default_variables and timezone (absent members
// of a stored agent read as their defaults).
func promptVariables(c data.PromptConfig, errs *Errors) {
	Variables(errs, "prompt_config.default_variables", c.DefaultVariables)
	if c.Timezone != "" {
		Timezone(errs, "prompt_config.timezone", c.Timezone)
	}
}

// maxConcurrentCalls checks an agent's max_concurrent_calls: null, or 1 to
// MaxConcurrentCalls.
func maxConcurrentCalls(errs *Errors, n *int) {
	if n != nil {
		errs.IntBetween("max_concurrent_calls", int64(*n), 1, MaxConcurrentCalls)
	}
}

// CallStart checks the body of POST /api/v1/calls/start (docs/runtime.md): the direction,
// the numbers, which of agent_id and from_number route the call, the variables and the
// metadata. Whether the number and the agent exist is the service's to say.
func CallStart(in data.CallStart) error {
	var errs Errors
	switch in.Direction {
	case "":
		errs.Required("direction")
	case data.DirectionInbound, data.DirectionOutbound:
	default:
		errs.Addf("direction", "The direction field must be inbound or outbound.")
	}
	if in.ToNumber == nil {
		errs.Required("to_number")
	} else {
		errs.Match("to_number", *in.ToNumber, e164, "an E.164 number such as +14155550123")
	}
	callNumber(&errs, "from_number", in.FromNumber)
	if in.AgentID != nil && !data.ValidID(data.PrefixAgent, *in.AgentID) {
		errs.Add("agent_id", "The agent_id field must be an agent of this workspace.")
	}
	switch in.Direction {
	case data.DirectionInbound:
		if in.AgentID != nil {
			errs.Add("agent_id", "The agent_id field is not allowed for an inbound call: the inbound agent of to_number answers it.")
		}
	case data.DirectionOutbound:
		if in.AgentID == nil && in.FromNumber == nil {
			errs.Add("agent_id", "The agent_id field is required for an outbound call unless from_number is a number of the workspace, whose outbound agent then calls.")
		}
	}
	Variables(&errs, "variables", in.Variables)
	object(&errs, "metadata", in.Metadata)
	return errs.Err()
}

// Rollout checks a rollout's body (conventions §23): 1 to MaxRolloutVariants variants of
// distinct versions, integer weights 0 to 100 summing to 100 with at least one above 0,
// and an optional rollback with a known metric, a threshold in [0, 1] and min_calls of 1
// to MaxRolloutMinCalls. Whether each version is a published version of the agent is the
// service's to say (VersionRefs).
func Rollout(in data.RolloutSet) error {
	var errs Errors
	switch {
	case len(in.Variants) == 0:
		errs.Required("variants")
	case len(in.Variants) > MaxRolloutVariants:
		errs.MaxItems("variants", len(in.Variants), MaxRolloutVariants)
	default:
		sum := 0
		seen := map[int]bool{}
		for i, v := range in.Variants {
			p := Index("variants", i)
			if v.Version < 1 {
				errs.Addf(p+".version", "The %s.version field must be a version number (at least 1).", p)
			} else if seen[v.Version] {
				errs.Addf(p+".version", "The %s.version field names version %d again: each version is one variant.", p, v.Version)
			}
			seen[v.Version] = true
			errs.IntBetween(p+".weight", int64(v.Weight), 0, 100)
			sum += v.Weight
		}
		if sum != 100 {
			errs.Addf("variants", "The variants' weights must sum to 100; they sum to %d.", sum)
		}
	}
	if r := in.Rollback; r != nil {
		if r.Metric == "" {
			errs.Required("rollback.metric")
		} else {
			errs.OneOf("rollback.metric", r.Metric, data.RolloutMetrics...)
		}
		errs.FloatBetween("rollback.threshold", r.Threshold, 0, 1)
		errs.IntBetween("rollback.min_calls", int64(r.MinCalls), 1, MaxRolloutMinCalls)
	}
	return errs.Err()
}

// VersionRefs reports each variant whose version is not a version of the agent (exists
// reads storage), under variants.<i>.version.
func VersionRefs(errs *Errors, in data.RolloutSet, exists func(version int) bool) {
	for i, v := range in.Variants {
		p := Index("variants", i) + ".version"
		if !errs.Has(p) && !exists(v.Version) {
			UnknownVersion(errs, p, v.Version)
		}
	}
}

// UnknownVersion reports that the field at path names version n, which the agent does
// not have: one message for every body and parameter that names a version (a rollout's
// variants, a conversation, a test run, a backfill, a knowledge query, analysis figures).
func UnknownVersion(errs *Errors, path string, n int) {
	errs.Addf(path, "The %s field must be a published version of the agent; version %d is none.", path, n)
}
