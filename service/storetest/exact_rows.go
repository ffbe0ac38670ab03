package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"exact_numbers_conversations_and_tests", testExactNumbersConversationsAndTests})
}

// exactValue holds numbers a float64 would round or rewrite.
func exactValue() map[string]any {
	return map[string]any{"id": json.Number("12345678901234567890"), "f": json.Number("0.1000000000000000055511151231257827"),
		"l": []any{json.Number("1.50"), map[string]any{"d": json.Number("2.5e300")}}, "s": "x"}
}

// testExactNumbersConversationsAndTests: numbers in a conversation's variables and its
// items' tool calls, and in a test's variables, mocks and criteria, a test run's copies
// and a result's transcript and variables come back as written (the same decimals: a
// float64 anywhere would round 12345678901234567890), each row read by its engine's
// decoding (data.DecodeJSON: row types for a conversation and its items, the Decoder for
// the tests' rows, which a row type per level made slower).
func testExactNumbersConversationsAndTests(t *testing.T, open Opener) {
	s := open(t)
	g := stepIDs()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	c, items := ConversationWithToolCalls(g, "ws_1", 4, t0)
	c.Variables["exact"] = exactValue()
	items[1].ToolCall.Arguments = exactValue()
	items[2].ToolCall.Result = []any{exactValue(), json.Number("-0.0")}

	test := storedTest(g, "ws_1", "agt_1", "exact", t0)
	test.Variables["exact"] = exactValue()
	test.Mocks["lookup"] = data.ToolMock{Status: 200, Body: exactValue()}
	test.Criteria = append(test.Criteria, data.Criterion{Type: data.CriterionVariableEquals, Name: "id", Value: json.Number("12345678901234567890")})
	revision := "c1-000000000000000000000000"
	run := storedRun(g, "ws_1", "agt_1", &revision, nil, []data.AgentTest{*test}, t0)
	run.Config.PromptConfig.DefaultVariables = exactValue()
	result := &data.TestCaseResult{TestID: test.ID, Repeat: 1, Status: data.TestPassed,
		Criteria:   []data.CriterionVerdict{{Criterion: test.Criteria[len(test.Criteria)-1], Passed: true}},
		Transcript: items, Variables: exactValue(), StartedAt: data.NewTime(t0), FinishedAt: data.NewTime(t0)}

	update(t, s, func(tx service.Tx) error {
		if err := tx.InsertConversation(c, items); err != nil {
			return err
		}
		if err := tx.PutAgentTest(test); err != nil {
			return err
		}
		if err := tx.PutTestRun(run); err != nil {
			return err
		}
		return tx.PutTestResult(run.ID, result)
	})
	view(t, s, func(tx service.Tx) error {
		gotC, err := tx.Conversation(c.ID)
		sameDecimals(t, "the conversation", gotC, err, c)
		gotItems, err := tx.ConversationItems(c.ID)
		sameDecimals(t, "its items", gotItems, err, items)
		gotTest, err := tx.AgentTest(test.ID)
		sameDecimals(t, "the test", gotTest, err, test)
		gotRun, err := tx.TestRun(run.ID)
		sameDecimals(t, "the test run", gotRun, err, run)
		results, err := tx.TestResults(run.ID)
		sameDecimals(t, "its results", results, err, []*data.TestCaseResult{result})
		return nil
	})
}

// sameDecimals fails the test unless got, encoded, means what want does (data.SameJSON: the
// same members, numbers the same decimals, whichever way an engine writes them).
func sameDecimals(t *testing.T, what string, got any, err error, want any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var g, w any
	for _, x := range []struct {
		v    any
		into *any
	}{{got, &g}, {want, &w}} {
		raw, err := json.Marshal(x.v)
		if err != nil {
			t.Fatal(err)
		}
		if err := data.DecodeJSON(raw, x.into); err != nil {
			t.Fatal(err)
		}
	}
	if !data.SameJSON(g, w) {
		t.Errorf("%s came back as\n%v\nwant\n%v", what, g, w)
	}
}
