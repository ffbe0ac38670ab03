package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// sipURIOf is a SIP URI of n characters, its user part of two-byte characters.
func sipURIOf(n int) string {
	const scheme, host = "sip:", "@example.com"
	return scheme + chars(n-len(scheme)-len(host)) + host
}

// transcriptOf is n items of one short line each.
func transcriptOf(n int) []data.TranscriptItem {
	items := make([]data.TranscriptItem, n)
	for i := range items {
		items[i] = data.TranscriptItem{Role: "agent", Content: "Hello."}
	}
	return items
}

// transcriptBytes is a transcript whose contents hold exactly n bytes together, each item
// within MaxTranscriptContent characters of two bytes (an odd n ends on a one-byte one).
func transcriptBytes(n int) []data.TranscriptItem {
	var items []data.TranscriptItem
	for n > 0 {
		c := chars(min(n/2, MaxTranscriptContent))
		if len(c) == 0 {
			c = "a"
		}
		items = append(items, data.TranscriptItem{Role: "user", Content: c})
		n -= len(c)
	}
	return items
}

// objectOf is an object that encodes to exactly n bytes.
func objectOf(n int) map[string]any {
	const wrap = len(`{"a":""}`)
	return map[string]any{"a": strings.Repeat("a", n-wrap)}
}

// variablesOf is variables, each a string within MaxVariableValue, encoding to exactly n
// bytes together.
func variablesOf(n int) map[string]any {
	vars := map[string]any{}
	for i := 0; ; i++ {
		name := fmt.Sprintf("v%03d", i)
		vars[name] = ""
		b, _ := json.Marshal(vars)
		room := n - len(b)
		vars[name] = strings.Repeat("a", min(room, MaxVariableValue))
		if room <= MaxVariableValue {
			return vars
		}
	}
}

// variablesCount is n variables with short values.
func variablesCount(n int) map[string]any {
	vars := map[string]any{}
	for i := range n {
		vars[fmt.Sprintf("v%03d", i)] = float64(i) // a number as JSON decodes it
	}
	return vars
}

func TestCallBounds(t *testing.T) {
	update := func(change func(*data.CallUpdate)) error {
		var in data.CallUpdate
		change(&in)
		return CallUpdate(in)
	}
	agent := "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ"
	create := func(change func(*data.CallCreate)) error {
		in := data.CallCreate{AgentID: agent, Direction: data.DirectionInbound, FromNumber: ptr("+14155550100"), ToNumber: ptr("+14155550123")}
		change(&in)
		return CallCreate(in)
	}
	checkBounds(t, []bound{
		{"MaxTranscriptItems", "transcript", func(past bool) error {
			return update(func(c *data.CallUpdate) { c.Transcript = data.Some(transcriptOf(upTo(MaxTranscriptItems, past))) })
		}},
		{"MaxTranscriptContent", "transcript.0.content", func(past bool) error {
			return update(func(c *data.CallUpdate) {
				c.Transcript = data.Some([]data.TranscriptItem{{Role: "user", Content: chars(upTo(MaxTranscriptContent, past))}})
			})
		}},
		{"MaxTranscriptBytes", "transcript", func(past bool) error {
			return update(func(c *data.CallUpdate) { c.Transcript = data.Some(transcriptBytes(upTo(MaxTranscriptBytes, past))) })
		}},
		{"MaxTranscriptStartMS", "transcript.0.start_ms", func(past bool) error {
			return update(func(c *data.CallUpdate) {
				c.Transcript = data.Some([]data.TranscriptItem{{Role: "user", Content: "Hi", StartMS: int64(upTo(MaxTranscriptStartMS, past))}})
			})
		}},
		{"MaxCallDurationMS", "duration_ms", func(past bool) error {
			return update(func(c *data.CallUpdate) { c.DurationMS = data.Some(int64(upTo(MaxCallDurationMS, past))) })
		}},
		{"MaxReasonLen", "disconnection_reason", func(past bool) error {
			return update(func(c *data.CallUpdate) { c.DisconnectionReason = data.Some(chars(upTo(MaxReasonLen, past))) })
		}},
		// RFC 3986 characters only, so ASCII: characters and bytes agree.
		{"MaxURLLen", "recording_url", func(past bool) error {
			const base = "https://example.com/"
			return update(func(c *data.CallUpdate) {
				c.RecordingURL = data.Some(base + strings.Repeat("a", upTo(MaxURLLen, past)-len(base)))
			})
		}},
		{"MaxObjectBytes metadata", "metadata", func(past bool) error {
			return update(func(c *data.CallUpdate) { c.Metadata = data.Some(objectOf(upTo(MaxObjectBytes, past))) })
		}},
		{"MaxObjectBytes analysis", "analysis", func(past bool) error {
			return create(func(c *data.CallCreate) { c.Analysis = objectOf(upTo(MaxObjectBytes, past)) })
		}},
		{"MaxSIPLen from_number", "from_number", func(past bool) error {
			return create(func(c *data.CallCreate) { c.FromNumber = ptr(sipURIOf(upTo(MaxSIPLen, past))) })
		}},
		{"MaxSIPLen to_number", "to_number", func(past bool) error {
			return create(func(c *data.CallCreate) { c.ToNumber = ptr(sipURIOf(upTo(MaxSIPLen, past))) })
		}},
		{"MaxSIPLen call start", "from_number", func(past bool) error {
			return CallStart(data.CallStart{Direction: data.DirectionInbound, ToNumber: ptr("+14155550123"), FromNumber: ptr(sipURIOf(upTo(MaxSIPLen, past)))})
		}},
	})
}

func TestConversationBounds(t *testing.T) {
	start := func(vars map[string]any) error { return ConversationStart(data.ConversationStart{Variables: vars}) }
	checkBounds(t, []bound{
		{"MaxConversationMessage", "content", func(past bool) error {
			return ConversationMessage(data.ConversationMessage{Content: chars(upTo(MaxConversationMessage, past))})
		}},
		{"MaxConversationVariables", "variables", func(past bool) error {
			return start(variablesCount(upTo(MaxConversationVariables, past)))
		}},
		{"MaxVariableValue", "variables.name", func(past bool) error {
			return start(map[string]any{"name": chars(upTo(MaxVariableValue, past))})
		}},
		{"MaxIdentifier variable name", "variables." + strings.Repeat("a", MaxIdentifier+1), func(past bool) error {
			return start(map[string]any{strings.Repeat("a", upTo(MaxIdentifier, past)): "x"})
		}},
		{"MaxObjectBytes variables", "variables", func(past bool) error {
			return start(variablesOf(upTo(MaxObjectBytes, past)))
		}},
		{"MaxVariableValue call start", "variables.name", func(past bool) error {
			return CallStart(data.CallStart{Direction: data.DirectionInbound, ToNumber: ptr("+14155550123"),
				Variables: map[string]any{"name": chars(upTo(MaxVariableValue, past))}})
		}},
		{"MaxConversationVariables number", "variables", func(past bool) error {
			return NumberCreate(data.NumberCreate{PhoneNumber: "+14155550123", Provider: data.NumberProviders[0],
				Variables: variablesCount(upTo(MaxConversationVariables, past))})
		}},
	})
}

func TestRolloutBounds(t *testing.T) {
	variants := func(n int) []data.RolloutVariantSet {
		out := make([]data.RolloutVariantSet, n)
		for i := range out {
			out[i] = data.RolloutVariantSet{Version: i + 1}
		}
		out[0].Weight = 100
		return out
	}
	checkBounds(t, []bound{
		{"MaxRolloutVariants", "variants", func(past bool) error {
			return Rollout(data.RolloutSet{Variants: variants(upTo(MaxRolloutVariants, past))})
		}},
		{"MaxRolloutMinCalls", "rollback.min_calls", func(past bool) error {
			return Rollout(data.RolloutSet{Variants: variants(2),
				Rollback: &data.RolloutRollback{Metric: data.RolloutMetrics[0], Threshold: 0.5, MinCalls: upTo(MaxRolloutMinCalls, past)}})
		}},
		{"MinRolloutMinCalls", "rollback.min_calls", func(past bool) error {
			return Rollout(data.RolloutSet{Variants: variants(2),
				Rollback: &data.RolloutRollback{Metric: data.RolloutMetrics[0], Threshold: 0.5, MinCalls: downTo(1, past)}})
		}},
	})
}
