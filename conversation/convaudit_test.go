package conversation

import (
	"net/http"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/llm"
)

// Conventions §21: "custom_function performs the real HTTP request (...; the tool's
// timeout, else 10 s)". A tool with no timeout, or 0, gets DefaultFunctionTimeout, which
// is 10 s; TestCustomFunctionTimeoutCapped holds a timeout that is set.
func TestConvAuditCustomFunctionDefaultTimeout(t *testing.T) {
	if DefaultFunctionTimeout != 10*time.Second {
		t.Fatalf("DefaultFunctionTimeout = %s, want the 10 s of conventions §21", DefaultFunctionTimeout)
	}
	for _, timeout := range []*int{nil, intp(0)} {
		var left time.Duration
		tool := functionTool("POST", "https://api.example.com")
		tool.Timeout = timeout
		m := &scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"order_id":"A"}`)), text("ok")}}
		e := engineWith(m, tool)
		e.Functions = doFunc(func(r *http.Request) (*http.Response, error) {
			deadline, _ := r.Context().Deadline()
			left = time.Until(deadline)
			return &http.Response{StatusCode: 204, Body: http.NoBody, Request: r}, nil
		})
		reply(t, e, State{Variables: map[string]any{"token": "t", "region": "eu"}}, "?")
		if left > DefaultFunctionTimeout || left < DefaultFunctionTimeout-5*time.Second {
			t.Errorf("timeout %v: the call had %s left, want about %s", timeout, left, DefaultFunctionTimeout)
		}
	}
}
