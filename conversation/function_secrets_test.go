package conversation

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
)

// An endpoint that echoes the request's headers in its answer hands the model and the
// transcript nothing of a credential header but its mask: neither the whole value nor
// its token alone, nor a variable set from the echo, nor the start of a secret the
// answer's 16 KiB cut falls inside. Ordinary headers, and credential values too short
// to tell from text, are left as the endpoint wrote them.
func TestCustomFunctionEchoedCredentialsMasked(t *testing.T) {
	const token = "sk_live_abcdefgh1234"
	const key = "k3y_0123456789"
	padding := 0 // bytes of filler before the echo, to put a secret across the cut
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo, _ := json.Marshal(map[string]string{
			"order_status":  "token " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
			"authorization": r.Header.Get("Authorization"), "key": r.Header.Get("X-Api-Key"),
			"session": r.Header.Get("X-Session"), "shop": r.Header.Get("X-Shop"),
		})
		if padding > 0 {
			io.WriteString(w, strings.Repeat("x", padding)+token)
			return
		}
		w.Write(echo)
	}))
	defer srv.Close()
	tool := functionTool("POST", srv.URL+"/orders")
	tool.CustomFunctionHeaders = []string{"Authorization: Bearer {{token}}", "X-Api-Key: " + key, "X-Session: 1234567", "X-Shop: acme-shop-main"}
	run := func() (map[string]any, *Outcome, *scripted) {
		m := &scripted{replies: []*llm.Reply{calls("", call("c1", "lookup", `{"order_id":"A-1"}`)), text("Done.")}}
		e := engineWith(m, tool)
		e.Functions = srv.Client()
		out := reply(t, e, State{Variables: map[string]any{"token": token, "region": "eu"}}, "where is A-1?")
		return out.Items[2].ToolCall.Result.(map[string]any), out, m
	}

	res, out, m := run()
	var echo map[string]string
	if err := json.Unmarshal([]byte(res["body"].(string)), &echo); err != nil {
		t.Fatalf("the answer the model read: %v (%q)", err, res["body"])
	}
	want := map[string]string{"order_status": "token ****1234", "authorization": "****1234", "key": "****6789",
		"session": "1234567", "shop": "acme-shop-main"}
	for k, v := range want {
		if echo[k] != v {
			t.Errorf("echoed %s = %q, want %q", k, echo[k], v)
		}
	}
	if got := out.Variables["order_status"]; got != "token ****1234" {
		t.Errorf("the variable set from the echo = %v", got)
	}
	for _, req := range m.reqs {
		for _, msg := range req.Messages {
			if strings.Contains(msg.Content, token) || strings.Contains(msg.Content, key) {
				t.Fatalf("the model read a secret: %.120q", msg.Content)
			}
		}
	}

	padding = MaxFunctionAnswer - 5 // the cut falls inside the token
	res, _, _ = run()
	body := res["body"].(string)
	if len(body) > MaxFunctionAnswer || res["truncated"] != true || strings.Contains(body, token[:5]) {
		t.Errorf("an answer cut inside a secret: %d bytes, truncated %v, ends %q", len(body), res["truncated"], body[len(body)-12:])
	}
}

// TestEchoedSecrets: which values an answer is searched for, at the length bound.
func TestEchoedSecrets(t *testing.T) {
	for _, c := range []struct {
		header string
		want   []string
	}{
		{"Authorization: Bearer abcdefgh", []string{"Bearer abcdefgh", "abcdefgh"}},
		{"Authorization: Bearer abcdefg", []string{"Bearer abcdefg"}}, // a 7-byte token alone matches text
		{"X-Api-Key: abcdefgh", []string{"abcdefgh"}},
		{"X-Api-Key: abcdefg", nil},
		{"X-Shop: abcdefghijk", nil}, // not a credential header
		{"Authorization:", nil},
	} {
		got := echoedSecrets(&data.Tool{CustomFunctionHeaders: []string{c.header}})
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%q: %q, want %q", c.header, got, c.want)
		}
	}
}
