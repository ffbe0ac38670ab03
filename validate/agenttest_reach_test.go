package validate

import (
	"encoding/json"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestAgentTestCriteriaThatCannotPass refuses (AgentTestReachable), naming the member, a criterion the
// agent's draft can never satisfy: an end no tool of the agent can bring, or a built-in
// tool's call with an argument it never carries or a value its argument never takes. The
// same criteria pass on an agent that can satisfy them; a custom_function's arguments are
// its author's schema and are not read.
func TestAgentTestCriteriaThatCannotPass(t *testing.T) {
	sms := "Your booking is confirmed."
	full := []*data.Tool{
		{Name: "book", Type: data.ToolCustomFunction, APIEndpoint: "https://example.com/book"},
		{Name: "hang_up", Type: data.ToolEndCall},
		{Name: "to_desk", Type: data.ToolTransferCall, PhoneDirectory: []data.PhoneDirectoryEntry{{Name: "desk"}, {Name: "billing"}}},
		{Name: "ivr", Type: data.ToolPressIVR},
		{Name: "text_me", Type: data.ToolSendSMS, ContentType: "prompt"},
		{Name: "text_static", Type: data.ToolSendSMS, ContentType: "predefined", Content: sms},
		{Name: "note", Type: data.ToolExtractDynamicVariable, Variables: []data.ToolVariable{
			{Name: "topic", Type: "enum", Choices: []string{"booking", "billing"}},
			{Name: "people", Type: "number"}, {Name: "vip", Type: "boolean"}, {Name: "guest", Type: "string"}}},
		nil,
	}
	noEnds := []*data.Tool{full[0], full[3], nil}
	called := func(name string, args string) data.Criterion {
		c := data.Criterion{Type: data.CriterionToolCalled, Name: name}
		if args != "" {
			var m map[string]any
			if err := json.Unmarshal([]byte(args), &m); err != nil {
				t.Fatal(err)
			}
			c.Arguments = m
		}
		return c
	}
	ends := func(reason string) data.Criterion {
		return data.Criterion{Type: data.CriterionEndsWith, Reason: reason}
	}
	for _, c := range []struct {
		name      string
		tools     []*data.Tool
		criterion data.Criterion
		paths     []string
	}{
		{"ends agent_ended with an end_call tool", full, ends(data.EndAgentEnded), nil},
		{"ends agent_ended without one", noEnds, ends(data.EndAgentEnded), []string{"criteria.0.reason"}},
		{"ends transferred with a transfer_call tool", full, ends(data.EndTransferred), nil},
		{"ends transferred without one", noEnds, ends(data.EndTransferred), []string{"criteria.0.reason"}},
		{"ends user_ended, whatever the tools", noEnds, ends(data.EndUserEnded), nil},
		{"ends max_turns, whatever the tools", noEnds, ends(data.EndMaxTurns), nil},
		{"an enum argument among its choices", full, called("note", `{"topic":"billing"}`), nil},
		{"an enum argument outside them", full, called("note", `{"topic":"pizza"}`), []string{"criteria.0.arguments.topic"}},
		{"a number argument", full, called("note", `{"people":2}`), nil},
		{"a number argument given a string", full, called("note", `{"people":"2"}`), []string{"criteria.0.arguments.people"}},
		{"a boolean argument", full, called("note", `{"vip":true}`), nil},
		{"a boolean argument given a string", full, called("note", `{"vip":"yes"}`), []string{"criteria.0.arguments.vip"}},
		{"a string argument", full, called("note", `{"guest":"Ada"}`), nil},
		{"a string argument given an object", full, called("note", `{"guest":{}}`), []string{"criteria.0.arguments.guest"}},
		{"an argument the tool has not", full, called("note", `{"topic":"booking","mood":"fine"}`), []string{"criteria.0.arguments.mood"}},
		{"no arguments", full, called("note", ``), nil},
		{"empty arguments", full, called("note", `{}`), nil},
		{"end_call with an argument", full, called("hang_up", `{"reason":"done"}`), []string{"criteria.0.arguments.reason"}},
		{"a destination of the directory", full, called("to_desk", `{"destination":"billing"}`), nil},
		{"a destination outside it", full, called("to_desk", `{"destination":"sales"}`), []string{"criteria.0.arguments.destination"}},
		{"digits of 20 keys", full, called("ivr", `{"digits":"0123456789*#01234567"}`), nil},
		{"digits of 21 keys", full, called("ivr", `{"digits":"0123456789*#012345678"}`), []string{"criteria.0.arguments.digits"}},
		{"digits with a letter", full, called("ivr", `{"digits":"1a"}`), []string{"criteria.0.arguments.digits"}},
		{"a written SMS's message", full, called("text_me", `{"message":"Booked"}`), nil},
		{"a written SMS's empty message", full, called("text_me", `{"message":""}`), []string{"criteria.0.arguments.message"}},
		{"a predefined SMS with a message", full, called("text_static", `{"message":"Booked"}`), []string{"criteria.0.arguments.message"}},
		{"a custom function's arguments are not read", full, called("book", `{"anything":[1,{"x":null}]}`), nil},
	} {
		x := validTest()
		x.Criteria = []data.Criterion{c.criterion}
		expectPaths(t, c.name, Combine(AgentTest(x, c.tools), AgentTestReachable(x, c.tools)), c.paths...)
	}
}
