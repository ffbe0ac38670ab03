package server_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// Numbers a user writes into free-form values keep their text (docs/api.md "Numbers"):
// as float64, 12345678901234567890 would come back 12345678901234567000.
const (
	bigInt     = "12345678901234567890"
	bigIntNext = "12345678901234567891"
	longFrac   = "0.1000000000000000055511151231257827"
)

// hasText fails unless the raw response, compacted (numbers as they are), holds each text.
func hasText(t *testing.T, what string, r *testkit.Response, texts ...string) {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, r.Body); err != nil {
		t.Fatalf("%s: %v: %.300s", what, err, r.Body)
	}
	for _, s := range texts {
		if !strings.Contains(b.String(), s) {
			t.Errorf("%s: %s is missing from %.600s", what, s, b.String())
		}
	}
}

// TestDefaultVariableNumbersKeptExactly: a default variable 12345678901234567890 (and a
// decimal past float64's precision) survives create, get, a workspace's export and
// import, is substituted as written into the model's system prompt, and two drafts
// differing only in its last digit have different revisions, so the publish gate tells
// them apart. Runs on both engines (VOICEAPI_TEST_BACKEND).
func TestDefaultVariableNumbersKeptExactly(t *testing.T) {
	e := newConvEnv(t, nil)
	e.stand.Respond(func(llmtest.Request) llmtest.Reply { return llmtest.Text("Noted.") })
	llm, _ := json.Marshal(e.llmConfig(nil))
	body := `{"name":"Exact","llm_config":` + string(llm) + `,"prompt_config":{"prompt":"Order {{ref}} at {{rate}}.",` +
		`"default_variables":{"ref":` + bigInt + `,"rate":` + longFrac + `}}}`
	created := e.Do("POST", "/api/v1/agents", e.tok, body)
	testkit.Expect(t, created, 201)
	id := created.Data()["id"].(string)
	kept := []string{`"ref":` + bigInt, `"rate":` + longFrac}
	hasText(t, "create", created, kept...)
	hasText(t, "get", e.Do("GET", "/api/v1/agents/"+id, e.tok, nil), kept...)

	conv := e.start(t, id, map[string]any{"version": "draft"}, 201).Data()["id"].(string)
	testkit.Expect(t, e.Do("POST", "/api/v1/conversations/"+conv+"/messages", e.tok, map[string]any{"content": "hello"}), 200)
	if want := "Order " + bigInt + " at " + longFrac + "."; !strings.Contains(e.stand.Last().System, want) {
		t.Errorf("the model's system prompt %q lacks %q", e.stand.Last().System, want)
	}

	doc := e.Do("GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/export", e.tok, nil)
	testkit.Expect(t, doc, 200)
	hasText(t, "export", doc, kept...)
	dst := testkit.NewServer(t, nil)
	testkit.Expect(t, dst.Do("POST", "/api/v1/workspaces/"+dst.Owner.WorkspaceID+"/import", dst.Owner.Token, doc.Body), 201)
	hasText(t, "imported", dst.Do("GET", "/api/v1/agents", dst.Owner.Token, nil), kept...)

	revision := func() string {
		r := e.Do("GET", "/api/v1/agents/"+id+"/publish-gate", e.tok, nil)
		testkit.Expect(t, r, 200)
		return r.Data()["revision"].(string)
	}
	before := revision()
	testkit.Expect(t, e.Do("PUT", "/api/v1/agents/"+id, e.tok,
		`{"prompt_config":{"default_variables":{"ref":`+bigIntNext+`,"rate":`+longFrac+`}}}`), 200)
	if after := revision(); after == before {
		t.Errorf("drafts differing only in ref's last digit share the revision %s", after)
	}
}

// TestCallNumbersKeptExactly: a call start's variables and metadata, a number's
// variables and a call's analysis keep the numbers as written, in the start's answer
// (the prompt substituted) and in the stored call. Both engines.
func TestCallNumbersKeptExactly(t *testing.T) {
	e := newStartEnv(t)
	testkit.Expect(t, e.Do("PUT", "/api/v1/numbers/"+e.number, e.Owner.Token, `{"variables":{"seats":98765432109876543210}}`), 200)
	hasText(t, "number", e.Do("GET", "/api/v1/numbers/"+e.number, e.Owner.Token, nil), `"seats":98765432109876543210`)
	r := e.Do("POST", "/api/v1/calls/start", e.runtime, `{"direction":"inbound","to_number":"`+startNumber+`","from_number":"+14155550199",`+
		`"variables":{"plan":`+bigInt+`},"metadata":{"order":{"id":`+bigIntNext+`,"total":`+longFrac+`}}}`)
	testkit.Expect(t, r, 201)
	hasText(t, "start", r, "on the "+bigInt+" plan", `"plan":`+bigInt, `"id":`+bigIntNext, `"total":`+longFrac)
	callID := r.Data()["call"].(map[string]any)["id"].(string)
	testkit.Expect(t, e.Do("PUT", "/api/v1/calls/"+callID, e.runtime, `{"analysis":{"order_total":`+longFrac+`}}`), 204)
	call := e.Do("GET", "/api/v1/calls/"+callID, e.Owner.Token, nil)
	testkit.Expect(t, call, 200)
	hasText(t, "call", call, `"plan":`+bigInt, `"id":`+bigIntNext, `"total":`+longFrac, `"order_total":`+longFrac)
}
