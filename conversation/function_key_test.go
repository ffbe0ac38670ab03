package conversation

import (
	"net/http"
	"regexp"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// keyShape is the documented shape of a custom function's Idempotency-Key.
var keyShape = regexp.MustCompile(`^voiceapi_fn_[0-9a-f]{32}$`)

// keyCall is one custom function request as its receiver saw it.
type keyCall struct {
	function string
	keys     []string // every Idempotency-Key value the request carried
}

// keyRecorder is a custom function caller that keeps each request's function (its path)
// and Idempotency-Key values, and answers 200.
func keyRecorder(calls *[]keyCall) doFunc {
	return func(r *http.Request) (*http.Response, error) {
		*calls = append(*calls, keyCall{function: r.URL.Path, keys: r.Header.Values(FunctionKeyHeader)})
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	}
}

// keyTools are two custom functions, book and lookup, whose paths are their names.
func keyTools() []*data.Tool {
	book := functionTool("POST", "https://api.example.com/book")
	book.Name = "book"
	return []*data.Tool{functionTool("POST", "https://api.example.com/lookup"), book}
}

// answerKeys answers msg after st on conversation convID with the model's replies, and
// returns the requests the functions received.
func answerKeys(t *testing.T, convID string, st State, msg string, replies ...*llm.Reply) []keyCall {
	t.Helper()
	var got []keyCall
	e := engineWith(&scripted{replies: replies}, keyTools()...)
	e.Facts.CallID = convID
	e.Functions = keyRecorder(&got)
	st.Variables = map[string]any{"token": "t", "region": "eu"}
	reply(t, e, st, msg)
	return got
}

// threeCalls is an answer that calls lookup twice in its first step and book in its
// second, then answers.
func threeCalls() []*llm.Reply {
	return []*llm.Reply{
		calls("", call("c1", "lookup", `{"order_id":"A"}`), call("c2", "lookup", `{"order_id":"B"}`)),
		calls("", call("c3", "book", `{"order_id":"A"}`)),
		text("Booked."),
	}
}

func keysOf(calls []keyCall) []string {
	var out []string
	for _, c := range calls {
		if len(c.keys) != 1 {
			return append(out, "(not one key)")
		}
		out = append(out, c.keys[0])
	}
	return out
}

// Each custom function request of an answer carries an Idempotency-Key of the documented
// shape, one of its own within the answer (across steps) and within the conversation
// (another turn, another message at the same place after a turn was lost); an answer run
// again from the same stored state (a re-answer after a crash stored nothing) sends the
// same keys.
func TestCustomFunctionIdempotencyKeys(t *testing.T) {
	first := answerKeys(t, "conv_1", State{}, "book me in", threeCalls()...)
	keys := keysOf(first)
	if len(keys) != 3 {
		t.Fatalf("requests = %+v, want three", first)
	}
	for _, k := range keys {
		if !keyShape.MatchString(k) {
			t.Errorf("key %q, want the shape %s", k, keyShape)
		}
	}
	if keys[0] == keys[1] || keys[1] == keys[2] || keys[0] == keys[2] {
		t.Errorf("the keys of one answer = %v, want each its own", keys)
	}
	again := keysOf(answerKeys(t, "conv_1", State{}, "book me in", threeCalls()...))
	if !slices.Equal(again, keys) {
		t.Errorf("the same message answered again from the same state sent %v, want %v", again, keys)
	}
	stored := []data.ConversationItem{{Role: data.ItemUser, Content: "hi"}, {Role: data.ItemAgent, Content: "Hello."}}
	next := keysOf(answerKeys(t, "conv_1", State{Items: stored}, "book me in", threeCalls()...))
	other := keysOf(answerKeys(t, "conv_2", State{}, "book me in", threeCalls()...))
	otherMessage := keysOf(answerKeys(t, "conv_1", State{}, "book me in tomorrow", threeCalls()...))
	for i, k := range keys {
		if slices.Contains(next, k) || slices.Contains(other, k) || slices.Contains(otherMessage, k) {
			t.Errorf("key %d (%s) came again in the next turn %v, another conversation %v or another message at its place %v",
				i, k, next, other, otherMessage)
		}
	}
}

// A re-answer is another run of a model, which may call the functions in another order:
// a call keeps its key when it is the same call of the same function (the first book),
// and a function called in the re-answer only gets a key of its own.
func TestCustomFunctionKeyFollowsTheFunction(t *testing.T) {
	first := answerKeys(t, "conv_1", State{}, "book me in", calls("", call("c1", "book", `{"order_id":"A"}`)), text("Booked."))
	again := answerKeys(t, "conv_1", State{}, "book me in", calls("", call("c1", "lookup", `{"order_id":"A"}`), call("c2", "book", `{"order_id":"A"}`)), text("Booked."))
	if len(first) != 1 || len(again) != 2 || again[1].function != "/book" {
		t.Fatalf("requests %+v then %+v", first, again)
	}
	if again[1].keys[0] != first[0].keys[0] {
		t.Errorf("book's key in the re-answer = %s, want the first answer's %s", again[1].keys[0], first[0].keys[0])
	}
	if again[0].keys[0] == first[0].keys[0] {
		t.Errorf("lookup, new in the re-answer, was sent book's key %s", first[0].keys[0])
	}
}

// The team's own Idempotency-Key header (custom_function_headers, any case, substituted)
// replaces voiceapi's: the request carries that one value only.
func TestCustomFunctionOwnIdempotencyKeyWins(t *testing.T) {
	var got []keyCall
	tool := functionTool("GET", "https://api.example.com/lookup")
	tool.CustomFunctionHeaders = append(tool.CustomFunctionHeaders, "idempotency-key: order-{{order_ref}}")
	e := engineWith(&scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"order_id":"A"}`)), text("ok")}}, tool)
	e.Functions = keyRecorder(&got)
	reply(t, e, State{Variables: map[string]any{"token": "t", "region": "eu", "order_ref": "A-1"}}, "?")
	if len(got) != 1 || !slices.Equal(got[0].keys, []string{"order-A-1"}) {
		t.Errorf("requests = %+v, want the tool's own key alone", got)
	}
}

// Without a conversation's id to scope them by, no key is sent rather than one that
// different conversations share.
func TestCustomFunctionNoKeyWithoutScope(t *testing.T) {
	got := answerKeys(t, "", State{}, "book me in", calls("", call("c1", "book", `{"order_id":"A"}`)), text("ok"))
	if len(got) != 1 || len(got[0].keys) != 0 {
		t.Errorf("requests = %+v, want one without a key", got)
	}
}
