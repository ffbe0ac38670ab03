package postgres_test

import (
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// A conversation keeps no state in a process: a replica continues a conversation another
// one started, and two messages sent at once through two replicas never interleave (the
// second is refused with 409 while the first holds the lease).
func TestConversationAcrossReplicas(t *testing.T) {
	stand := llmtest.New(t, data.LLMInternal)
	entered, release := make(chan struct{}), make(chan struct{})
	free := sync.OnceFunc(func() { close(release) })
	defer free() // a failure must not leave the first answer waiting
	var slow atomic.Int32
	stand.Respond(func(r llmtest.Request) llmtest.Reply {
		if r.LastUserText() == "slow" && slow.Add(1) == 1 { // it waits; any other goes through
			close(entered)
			<-release
		}
		return llmtest.Text("You said: " + r.LastUserText())
	})
	settings := cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}
	reps := testkit.NewReplicas(t, 2, testkit.ReplicaOptions{Prepare: func(svc *service.Services) {
		svc.Conversations.Configure(cli.ConversationOptions(settings))
	}})
	a, b := reps[0], reps[1]
	tok := a.Owner.Token
	raw, _ := json.Marshal(stand.LLMConfig())
	var cfg map[string]any
	json.Unmarshal(raw, &cfg)
	r := a.Do("POST", "/api/v1/agents", tok, map[string]any{"name": "A", "llm_config": cfg})
	testkit.Expect(t, r, 201)
	r = a.Do("POST", "/api/v1/agents/"+r.Data()["id"].(string)+"/conversations", tok, map[string]any{"version": "draft"})
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	path := "/api/v1/conversations/" + id + "/messages"
	testkit.Expect(t, a.Do("POST", path, tok, map[string]any{"content": "one"}), 200)
	// B takes the next message: the history A stored reaches the model.
	testkit.Expect(t, b.Do("POST", path, tok, map[string]any{"content": "two"}), 200)
	if m := stand.Last().Messages; len(m) != 4 || m[1].Content != "one" || m[2].Content != "You said: one" {
		t.Errorf("the model's view on replica B = %+v", m)
	}
	// Two at once: A holds the lease, B is refused.
	first := make(chan *testkit.Response)
	go func() { first <- testkit.Request(t, a.URL, "POST", path, tok, map[string]any{"content": "slow"}) }()
	<-entered
	testkit.Expect(t, b.Do("POST", path, tok, map[string]any{"content": "meanwhile"}), 409)
	free()
	testkit.Expect(t, <-first, 200)
	end := b.Do("POST", "/api/v1/conversations/"+id+"/end", tok, nil)
	testkit.Expect(t, end, 200)
	if n := len(end.Data()["transcript"].([]any)); n != 7 {
		t.Errorf("transcript items = %d, want the opening and three turns", n)
	}
	if got := a.Do("GET", "/api/v1/calls/"+end.Data()["id"].(string), tok, nil); got.Status != 200 {
		t.Errorf("replica A does not see the call: %d", got.Status)
	}
}

// Two starts through two replicas race for a workspace's last open conversation: both
// find it free before their openings (the model writes each), and the transactions that
// insert them count again under the workspace's lock, so one is stored (201) and the
// other refused (409 naming the bound).
func TestConversationLastSlotAcrossReplicas(t *testing.T) {
	stand := llmtest.New(t, data.LLMInternal)
	entered, release := make(chan struct{}, 2), make(chan struct{})
	free := sync.OnceFunc(func() { close(release) })
	defer free()
	stand.Respond(func(llmtest.Request) llmtest.Reply {
		entered <- struct{}{}
		<-release
		return llmtest.Text("Hello, how can I help?")
	})
	settings := cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}, MaxOpenConversations: 1}
	reps := testkit.NewReplicas(t, 2, testkit.ReplicaOptions{Prepare: func(svc *service.Services) {
		svc.Conversations.Configure(cli.ConversationOptions(settings))
	}})
	tok := reps[0].Owner.Token
	raw, _ := json.Marshal(stand.LLMConfig())
	var cfg map[string]any
	json.Unmarshal(raw, &cfg)
	r := reps[0].Do("POST", "/api/v1/agents", tok, map[string]any{"name": "A", "llm_config": cfg,
		"prompt_config": map[string]any{"first_speaker": "ai", "welcome_message_type": "dynamic"}})
	testkit.Expect(t, r, 201)
	path := "/api/v1/agents/" + r.Data()["id"].(string) + "/conversations"
	answers := make(chan *testkit.Response, 2)
	for _, rep := range reps {
		go func() { answers <- testkit.Request(t, rep.URL, "POST", path, tok, map[string]any{"version": "draft"}) }()
	}
	<-entered
	<-entered // both are in their openings, past the first count
	free()
	statuses := map[int]int{}
	for range reps {
		a := <-answers
		statuses[a.Status]++
		if a.Status == 409 && (a.Code() != "conflict" || !strings.Contains(a.JSON()["message"].(string), "--max-open-conversations")) {
			t.Errorf("the loser's answer: %s", a.Body)
		}
	}
	if statuses[201] != 1 || statuses[409] != 1 {
		t.Errorf("statuses = %v, want one 201 and one 409", statuses)
	}
}
