package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// The actions that are not creates (adding sources, a webhook's test, replay and delivery
// retry) keep their answer in the claim their transaction writes, as creates do: the
// connection to PostgreSQL is lost right after each one committed and before its response
// was kept; once the database is back, the retry under the same Idempotency-Key gets the
// first answer again (status, body, headers), and the action was carried out once. With
// only a "carried out" claim, each retry was a 409 (issue 24).
func TestActionReplayAfterConnectionLostBetweenCommitAndAnswer(t *testing.T) {
	cluster, url := ownCluster(t)
	f := &lostAnswerFixture{r: testkit.NewReplicas(t, 1, testkit.ReplicaOptions{URL: url})[0]}
	f.tok = f.r.Owner.Token
	var armed atomic.Bool
	f.r.PG.SetEventHook(func() { // called after a commit that recorded events or queued a delivery
		if armed.CompareAndSwap(true, false) {
			if err := cluster.Halt(); err != nil {
				t.Error(err)
			}
		}
		f.r.Dispatcher.Wake() // what it queued is posted once the database is back
	})
	f.setUp(t)

	for i, a := range f.actions() {
		t.Run(a.name, func(t *testing.T) {
			waitFor(t, "the deliveries settled", func() bool { return f.settled(t) })
			key := fmt.Sprint("lost-answer-", i)
			armed.Store(true)
			first := f.r.Do("POST", a.path, f.tok, a.body, "Idempotency-Key", key)
			testkit.Expect(t, first, a.status)
			if armed.Load() {
				armed.Store(false)
				t.Fatal("the action committed nothing the hook sees: the database was never stopped")
			}
			if err := cluster.Resume(); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(f.r.Logs.String(), "saving idempotent response"); n != i+1 {
				t.Fatalf("%d failed saves of a response logged, want %d: the response was kept although the database was down", n, i+1)
			}
			again := f.r.Do("POST", a.path, f.tok, a.body, "Idempotency-Key", key)
			testkit.Expect(t, again, a.status)
			if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) ||
				again.Header.Get("ETag") != first.Header.Get("ETag") || again.Header.Get("Content-Type") != first.Header.Get("Content-Type") {
				t.Fatalf("the retry answered %s (%v), the first %s (%v)", again.Body, again.Header, first.Body, first.Header)
			}
			waitFor(t, "the deliveries settled", func() bool { return f.settled(t) })
			a.once(t)
		})
	}
}

// lostAnswerFixture is a replica with a webhook for test events, one test event
// delivered, and a knowledge base: what the actions act on.
type lostAnswerFixture struct {
	r                *testkit.Replica
	tok              string
	start            string // before the setup, for a replay of everything since
	hookPath, kbPath string
	firstDelivery    string
	received         atomic.Int32 // posts to the receiver
}

// setUp makes the fixture's records. The webhook is for test events only, so no other
// write of the setup queues a delivery; its one test event delivered is the delivery
// to retry, the event to replay.
func (f *lostAnswerFixture) setUp(t *testing.T) {
	t.Helper()
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		f.received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	f.start = time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	hook := f.r.Do("POST", "/api/v1/webhooks", f.tok, map[string]any{"url": receiver.URL + "/hook", "events": []string{data.EventWebhookTest}})
	testkit.Expect(t, hook, 201)
	f.hookPath = "/api/v1/webhooks/" + hook.Data()["id"].(string)
	testkit.Expect(t, f.r.Do("POST", f.hookPath+"/test", f.tok, nil), 202)
	waitFor(t, "the first delivery", func() bool { return f.received.Load() == 1 && f.settled(t) })
	f.firstDelivery = f.deliveries(t)[0]["id"].(string)
	kb := f.r.Do("POST", "/api/v1/knowledge-bases", f.tok, map[string]any{"name": "Returns"})
	testkit.Expect(t, kb, 201)
	f.kbPath = "/api/v1/knowledge-bases/" + kb.Data()["id"].(string)
}

// deliveries lists the webhook's deliveries.
func (f *lostAnswerFixture) deliveries(t *testing.T) []map[string]any {
	return listAll(t, f.r, f.hookPath+"/deliveries", f.tok)
}

// settled tells whether no delivery of the webhook is pending.
func (f *lostAnswerFixture) settled(t *testing.T) bool {
	for _, d := range f.deliveries(t) {
		if d["status"] == data.DeliveryPending {
			return false
		}
	}
	return true
}

// lostAnswerAction is an action sent under an Idempotency-Key, its status, and the check
// that it was carried out once.
type lostAnswerAction struct {
	name, path string
	body       any
	status     int
	once       func(t *testing.T)
}

// actions lists the actions that are not creates, in the order they run: each check
// counts what the ones before it did too.
func (f *lostAnswerFixture) actions() []lostAnswerAction {
	r, tok := f.r, f.tok
	return []lostAnswerAction{
		{"adding sources", f.kbPath + "/sources/add", map[string]any{"texts": []map[string]any{{"title": "Returns", "content": "Returns are free within thirty days."}}}, 200,
			func(t *testing.T) {
				if texts := r.Do("GET", f.kbPath, tok, nil).Data()["texts"].([]any); len(texts) != 1 {
					t.Errorf("%d texts, want the one source added once", len(texts))
				}
			}},
		{"a webhook's test", f.hookPath + "/test", nil, 202,
			func(t *testing.T) {
				n := 0
				for _, e := range listAll(t, r, "/api/v1/audit-log", tok) {
					if e["type"] == data.EventWebhookTest {
						n++
					}
				}
				if n != 2 {
					t.Errorf("%d test events, want the setup's and this one", n)
				}
			}},
		{"a replay", f.hookPath + "/replay", map[string]any{"from": f.start, "to": time.Now().UTC().Add(time.Hour).Format(time.RFC3339)}, 202,
			func(t *testing.T) {
				if n := len(f.deliveries(t)); n != 4 { // the two tests', and the replay of each
					t.Errorf("%d deliveries, want 4", n)
				}
			}},
		{"a delivery's retry", f.hookPath + "/deliveries/" + f.firstDelivery + "/retry", nil, 202,
			func(t *testing.T) {
				if n := len(f.deliveries(t)); n != 5 {
					t.Errorf("%d deliveries, want 5: one more for the retry", n)
				}
			}},
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A conversation's start is a create that records no event, so the commit hook above
// cannot cut it. Its answer is kept in the transaction that inserts the conversation
// (service: answerStartClaim), not by a write after the commit that a lost connection
// would skip: a trigger here ends the connection of any write that replaces a claim by
// its answer, as a connection lost between the commit and the answer would, and the
// start must neither need such a write nor lose its answer. The retry under the same
// Idempotency-Key gets the 201 again, the conversation made once.
func TestConversationStartReplayAfterConnectionLost(t *testing.T) {
	stand := llmtest.New(t, data.LLMInternal)
	settings := cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}
	r := testkit.NewReplicas(t, 1, testkit.ReplicaOptions{Prepare: func(svc *service.Services) {
		svc.Conversations.Configure(cli.ConversationOptions(settings))
	}})[0]
	tok := r.Owner.Token
	raw, _ := json.Marshal(stand.LLMConfig())
	var cfg map[string]any
	json.Unmarshal(raw, &cfg)
	agent := r.Do("POST", "/api/v1/agents", tok, map[string]any{"name": "A", "llm_config": cfg})
	testkit.Expect(t, agent, 201)
	path := "/api/v1/agents/" + agent.Data()["id"].(string) + "/conversations"
	_, err := r.PG.Pool().Exec(context.Background(), `
		CREATE FUNCTION lose_the_answer() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END $$;
		CREATE TRIGGER lose_the_answer BEFORE UPDATE ON idempotency_responses
			FOR EACH ROW WHEN (OLD.claim_id <> '' AND NEW.claim_id = '') EXECUTE FUNCTION lose_the_answer();`)
	if err != nil {
		t.Fatal(err)
	}
	first := r.Do("POST", path, tok, map[string]any{"version": "draft"}, "Idempotency-Key", "lost-start")
	testkit.Expect(t, first, 201)
	if strings.Contains(r.Logs.String(), "saving idempotent response") {
		t.Fatalf("the start's answer was saved after its commit, by a write a lost connection skips; logs:\n%s", r.Logs.String())
	}
	var status int
	var body []byte
	if err := r.PG.Pool().QueryRow(context.Background(),
		`SELECT status, body FROM idempotency_responses WHERE key = $1`, []byte("lost-start")).Scan(&status, &body); err != nil ||
		status != 201 || len(body) == 0 {
		t.Fatalf("kept under the key: status %d, %d bytes (%v); want the 201 with its body, kept with the conversation", status, len(body), err)
	}
	again := r.Do("POST", path, tok, map[string]any{"version": "draft"}, "Idempotency-Key", "lost-start")
	testkit.Expect(t, again, 201)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) || again.Header.Get("ETag") != first.Header.Get("ETag") {
		t.Fatalf("the retry answered %s (%v), the first %s (%v)", again.Body, again.Header, first.Body, first.Header)
	}
	var n int
	if err := r.PG.Pool().QueryRow(context.Background(), `SELECT count(*) FROM conversations`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d conversations (%v), want the one the first request made", n, err)
	}
}
