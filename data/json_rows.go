package data

import "encoding/json"

// Conversations, their items, agent tests, test runs and their results decode as the call
// and agent rows do (json_freeform.go): json.Unmarshal into a row type that shadows each
// free-form member. Their free-form members sit deeper (a tool call's arguments in an
// item, in a result's transcript, in a run's results), so a row type shadows the member
// holding them with one of the *Into types below, which decode into the record's own
// member by its element's row decoding (decodeRow): no copy of the record to put back.

// anyInto decodes a free-form member into *into, numbers as written.
type anyInto struct{ into *any }

func (r anyInto) UnmarshalJSON(b []byte) error {
	if decodeFreeForm(b, r.into) {
		return nil
	}
	return decodeUseNumber(b, r.into) // the Decoder's error
}

// objectInto decodes a free-form object (variables) into *into, as JSONObject does.
type objectInto struct{ into *map[string]any }

func (r objectInto) UnmarshalJSON(b []byte) error { return (*JSONObject)(r.into).UnmarshalJSON(b) }

// agentConfigInto decodes an agent's configuration (a test run's copy) into *into.
type agentConfigInto struct{ into *AgentConfig }

func (r agentConfigInto) UnmarshalJSON(b []byte) error { return decodeAgentConfigRow(b, r.into) }

// rowDecoder is a record whose decodeRow decodes it as DecodeJSON would, by a row type.
type rowDecoder[T any] interface {
	*T
	decodeRow(b []byte) error
}

// rowElem is a T in an array or an object, decoded by its decodeRow.
type rowElem[T any, P rowDecoder[T]] struct{ v T }

func (e *rowElem[T, P]) UnmarshalJSON(b []byte) error { return P(&e.v).decodeRow(b) }

// rowInto decodes a T member into *into by its decodeRow (null leaves it, as for a struct).
type rowInto[T any, P rowDecoder[T]] struct{ into *T }

func (r rowInto[T, P]) UnmarshalJSON(b []byte) error { return P(r.into).decodeRow(b) }

// rowsInto decodes an array of Ts into *into as json.Unmarshal would: null is nil, the
// elements it held decode in place.
type rowsInto[T any, P rowDecoder[T]] struct{ into *[]T }

func (r rowsInto[T, P]) UnmarshalJSON(b []byte) error {
	var elems []rowElem[T, P]
	if len(*r.into) > 0 {
		elems = make([]rowElem[T, P], len(*r.into))
		for i := range *r.into {
			elems[i].v = (*r.into)[i]
		}
	}
	if err := json.Unmarshal(b, &elems); err != nil {
		return err
	}
	if elems == nil {
		*r.into = nil
		return nil
	}
	out := make([]T, len(elems))
	for i := range elems {
		out[i] = elems[i].v
	}
	*r.into = out
	return nil
}

// mapInto decodes an object of Ts into *into as json.Unmarshal would: null is nil, its
// members are set in the map it held (each a new T), the others kept.
type mapInto[T any, P rowDecoder[T]] struct{ into *map[string]T }

func (r mapInto[T, P]) UnmarshalJSON(b []byte) error {
	var elems map[string]rowElem[T, P]
	if err := json.Unmarshal(b, &elems); err != nil {
		return err
	}
	if elems == nil {
		*r.into = nil
		return nil
	}
	if *r.into == nil {
		*r.into = make(map[string]T, len(elems))
	}
	for k, e := range elems {
		(*r.into)[k] = e.v
	}
	return nil
}

type toolCallFields ToolCallItem

// freeFormValue is a free-form member decoded in place, numbers as written.
type freeFormValue struct{ v any }

func (f *freeFormValue) UnmarshalJSON(b []byte) error { return anyInto{&f.v}.UnmarshalJSON(b) }

// toolCallValue is a tool call as its item's row decodes it, in the item's own pass: a
// nested json.Unmarshal (a *Into type) would scan its bytes twice more.
type toolCallValue struct {
	toolCallFields
	Arguments freeFormValue `json:"arguments"`
	Result    freeFormValue `json:"result"`
}

type conversationItemFields ConversationItem

// conversationItemRow is how a conversation's item decodes (a row read at every turn).
type conversationItemRow struct {
	*conversationItemFields
	ToolCall *toolCallValue `json:"tool_call"`
}

func (it *ConversationItem) decodeRow(b []byte) error {
	r := conversationItemRow{conversationItemFields: (*conversationItemFields)(it)}
	if tc := it.ToolCall; tc != nil { // json.Unmarshal decodes into the call it points at
		r.ToolCall = &toolCallValue{toolCallFields(*tc), freeFormValue{tc.Arguments}, freeFormValue{tc.Result}}
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	if r.ToolCall == nil {
		it.ToolCall = nil
		return nil
	}
	tc := ToolCallItem(r.ToolCall.toolCallFields)
	tc.Arguments, tc.Result = r.ToolCall.Arguments.v, r.ToolCall.Result.v
	if it.ToolCall == nil {
		it.ToolCall = &tc
	} else {
		*it.ToolCall = tc
	}
	return nil
}

type storedConversationFields StoredConversation

// storedConversationRow is how a stored conversation decodes.
type storedConversationRow struct {
	*storedConversationFields
	Variables objectInto                                    `json:"variables"`
	Messages  rowsInto[ConversationItem, *ConversationItem] `json:"messages"`
}

func decodeStoredConversationRow(b []byte, c *StoredConversation) error {
	return json.Unmarshal(b, &storedConversationRow{(*storedConversationFields)(c), objectInto{&c.Variables},
		rowsInto[ConversationItem, *ConversationItem]{&c.Messages}})
}

type toolMockFields ToolMock

// toolMockRow is how a test's tool mock decodes.
type toolMockRow struct {
	*toolMockFields
	Body anyInto `json:"body"`
}

func (m *ToolMock) decodeRow(b []byte) error {
	return json.Unmarshal(b, &toolMockRow{(*toolMockFields)(m), anyInto{&m.Body}})
}

type criterionFields Criterion

// criterionRow is how a test's criterion decodes (its arguments are a JSONObject).
type criterionRow struct {
	*criterionFields
	Value anyInto `json:"value,omitempty"`
}

func (c *Criterion) decodeRow(b []byte) error {
	return json.Unmarshal(b, &criterionRow{(*criterionFields)(c), anyInto{&c.Value}})
}

type agentTestFields AgentTest

// agentTestRow is how an agent test decodes (a row, and each of a test run's copies).
type agentTestRow struct {
	*agentTestFields
	Variables objectInto                      `json:"variables"`
	Mocks     mapInto[ToolMock, *ToolMock]    `json:"mocks"`
	Criteria  rowsInto[Criterion, *Criterion] `json:"criteria"`
}

func (t *AgentTest) decodeRow(b []byte) error {
	return json.Unmarshal(b, &agentTestRow{(*agentTestFields)(t), objectInto{&t.Variables},
		mapInto[ToolMock, *ToolMock]{&t.Mocks}, rowsInto[Criterion, *Criterion]{&t.Criteria}})
}

type criterionVerdictFields CriterionVerdict

// criterionVerdictRow is how a criterion's verdict in a test's result decodes.
type criterionVerdictRow struct {
	*criterionVerdictFields
	Criterion rowInto[Criterion, *Criterion] `json:"criterion"`
}

func (v *CriterionVerdict) decodeRow(b []byte) error {
	return json.Unmarshal(b, &criterionVerdictRow{(*criterionVerdictFields)(v), rowInto[Criterion, *Criterion]{&v.Criterion}})
}

type testCaseResultFields TestCaseResult

// testCaseResultRow is how a repeat's result decodes (a row of its own).
type testCaseResultRow struct {
	*testCaseResultFields
	Criteria   rowsInto[CriterionVerdict, *CriterionVerdict] `json:"criteria"`
	Transcript rowsInto[ConversationItem, *ConversationItem] `json:"transcript"`
	Variables  objectInto                                    `json:"variables"`
}

func (r *TestCaseResult) decodeRow(b []byte) error {
	return json.Unmarshal(b, &testCaseResultRow{(*testCaseResultFields)(r), rowsInto[CriterionVerdict, *CriterionVerdict]{&r.Criteria},
		rowsInto[ConversationItem, *ConversationItem]{&r.Transcript}, objectInto{&r.Variables}})
}

type testResultFields TestResult

// testResultRow is how a test's result in a run decodes.
type testResultRow struct {
	*testResultFields
	Repeats rowsInto[TestCaseResult, *TestCaseResult] `json:"repeats"`
}

func (r *TestResult) decodeRow(b []byte) error {
	return json.Unmarshal(b, &testResultRow{(*testResultFields)(r), rowsInto[TestCaseResult, *TestCaseResult]{&r.Repeats}})
}

type storedTestRunFields StoredTestRun

// storedTestRunRow is how a stored test run decodes: its results (none stored in the
// row), its configuration's copy and its tests' copies.
type storedTestRunRow struct {
	*storedTestRunFields
	Results rowsInto[TestResult, *TestResult] `json:"results"`
	Config  agentConfigInto                   `json:"config"`
	Tests   rowsInto[AgentTest, *AgentTest]   `json:"tests"`
}

func decodeStoredTestRunRow(b []byte, r *StoredTestRun) error {
	return json.Unmarshal(b, &storedTestRunRow{(*storedTestRunFields)(r), rowsInto[TestResult, *TestResult]{&r.Results},
		agentConfigInto{&r.Config}, rowsInto[AgentTest, *AgentTest]{&r.Tests}})
}
