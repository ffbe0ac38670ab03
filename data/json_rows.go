package data

import "encoding/json"

// A conversation and its items decode as the call and agent rows do (json_freeform.go):
// json.Unmarshal into a row type that shadows each free-form member. An item's are in its
// tool call, which its row decodes in the same pass (toolCallValue); a conversation's
// messages (stored apart, null in its row) by their items' decodeRow.
//
// Agent tests, test runs and their results stay on the Decoder: their free-form members
// sit three to five levels down (a run's tests' mocks' bodies, a result's transcript's
// tool calls), and decoding each level by a nested json.Unmarshal (a row type per level,
// as itemsInto) scanned the deep bytes twice a level: more time and allocations than the
// Decoder's copy (docs/performance.md, "Conversations and their items").

// objectInto decodes a free-form object (variables) into *into, as JSONObject does.
type objectInto struct{ into *map[string]any }

func (r objectInto) UnmarshalJSON(b []byte) error { return (*JSONObject)(r.into).UnmarshalJSON(b) }

// itemElem is an item in an array, decoded by its decodeRow.
type itemElem struct{ it ConversationItem }

func (e *itemElem) UnmarshalJSON(b []byte) error { return e.it.decodeRow(b) }

// itemsInto decodes an array of items into *into as json.Unmarshal would: null is nil,
// the items it held decode in place.
type itemsInto struct{ into *[]ConversationItem }

func (r itemsInto) UnmarshalJSON(b []byte) error {
	var elems []itemElem
	if len(*r.into) > 0 {
		elems = make([]itemElem, len(*r.into))
		for i := range *r.into {
			elems[i].it = (*r.into)[i]
		}
	}
	if err := json.Unmarshal(b, &elems); err != nil {
		return err
	}
	if elems == nil {
		*r.into = nil
		return nil
	}
	out := make([]ConversationItem, len(elems))
	for i := range elems {
		out[i] = elems[i].it
	}
	*r.into = out
	return nil
}

type toolCallFields ToolCallItem

// freeFormValue is a free-form member decoded in place, numbers as written.
type freeFormValue struct{ v any }

func (f *freeFormValue) UnmarshalJSON(b []byte) error {
	if decodeFreeForm(b, &f.v) {
		return nil
	}
	return decodeUseNumber(b, &f.v) // the Decoder's error
}

// toolCallValue is a tool call as its item's row decodes it, in the item's own pass: a
// nested json.Unmarshal (a type of its own decoding into the item's call) scanned its
// bytes twice more.
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
	Variables objectInto `json:"variables"`
	Messages  itemsInto  `json:"messages"`
}

func decodeStoredConversationRow(b []byte, c *StoredConversation) error {
	return json.Unmarshal(b, &storedConversationRow{(*storedConversationFields)(c), objectInto{&c.Variables},
		itemsInto{&c.Messages}})
}
