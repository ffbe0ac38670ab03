package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/webhook"
)

// Three replicas on one database: what each point of the scale-out design promises,
// driven through real HTTP, concurrently where the promise is about concurrency.

func threeReplicas(t *testing.T, o testkit.ReplicaOptions) []*testkit.Replica {
	t.Helper()
	return testkit.NewReplicas(t, 3, o)
}

func agentBody(name string) map[string]any { return map[string]any{"name": name} }

// A key revoked through one replica is refused by the others on their next request,
// and an agent changed through one is read changed through the others: their caches
// check the row revisions the database keeps.
func TestReplicasCachesNeverServeStale(t *testing.T) {
	rs := threeReplicas(t, testkit.ReplicaOptions{})
	owner := rs[0].Owner
	key := rs[0].Do("POST", "/api/v1/api-keys", owner.Token, map[string]any{"name": "ci"})
	testkit.Expect(t, key, 201)
	token, id := key.JSON()["token"].(string), key.Data()["id"]
	created := rs[0].Do("POST", "/api/v1/agents", token, agentBody("Before"))
	testkit.Expect(t, created, 201)
	agentID := created.Data()["id"].(string)
	for _, r := range rs { // every replica has the key and the agent cached
		testkit.Expect(t, r.Do("GET", "/api/v1/agents/"+agentID, token, nil), 200)
	}
	testkit.Expect(t, rs[1].Do("PUT", "/api/v1/agents/"+agentID, token, agentBody("After")), 200)
	for i, r := range rs {
		if got := r.Do("GET", "/api/v1/agents/"+agentID, token, nil); got.Data()["name"] != "After" {
			t.Errorf("replica %d reads the agent as %v after replica 1 changed it", i, got.Data()["name"])
		}
	}
	testkit.Expect(t, rs[0].Do("DELETE", fmt.Sprintf("/api/v1/api-keys/%v", id), owner.Token, nil), 204)
	for i, r := range rs {
		if got := r.Do("GET", "/api/v1/agents/"+agentID, token, nil); got.Status != 401 {
			t.Errorf("replica %d answered %d to a key revoked through replica 0", i, got.Status)
		}
	}
}

// The per-token limit is the cluster's: requests spread over three replicas get the
// limit in all, not three times it.
func TestReplicasShareRateLimits(t *testing.T) {
	const limit = 10
	// Mid-minute on a still clock: a burst that crossed a window's end would start a new
	// window and prove nothing.
	now := time.Now().Truncate(time.Minute).Add(30 * time.Second)
	rs := threeReplicas(t, testkit.ReplicaOptions{Configure: func(c *server.Config) {
		c.RateLimit, c.LoginRateLimit = limit, 3
		c.Now = func() time.Time { return now }
	}})
	token := rs[0].Owner.Token
	var ok, limited atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch r := rs[i%3].Do("GET", "/api/v1/agents", token, nil); r.Status {
			case 200:
				ok.Add(1)
			case 429:
				limited.Add(1)
				if r.Header.Get("Retry-After") == "" {
					t.Error("a 429 without Retry-After")
				}
			default:
				t.Errorf("status %d", r.Status)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != limit || limited.Load() != 30-limit {
		t.Errorf("%d allowed and %d limited across the replicas, want %d and %d", ok.Load(), limited.Load(), limit, 30-limit)
	}
	// Login attempts for one address and email, one per replica in turn.
	refused := 0
	for i := range 6 {
		r := rs[i%3].Do("POST", "/api/v1/auth/login", "", map[string]any{"email": "owner@example.com", "password": "wrong-password"})
		if r.Status == 429 {
			refused++
		}
	}
	if refused != 3 {
		t.Errorf("%d of 6 logins refused for the limit, want 3 (a limit of 3 across the cluster)", refused)
	}
}

// One Idempotency-Key sent to every replica at once makes one record; a quota of 10
// holds under 100 concurrent creates spread over the replicas; one phone number
// registered through two replicas at once is registered once.
func TestReplicasKeepUniquenessAndQuotas(t *testing.T) {
	rs := threeReplicas(t, testkit.ReplicaOptions{})
	owner := rs[0].Owner
	ctx := context.Background()

	var wg sync.WaitGroup
	statuses := make([]int, 3)
	ids := make([]string, 3)
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := r.Do("POST", "/api/v1/agents", owner.Token, agentBody("Once"), "Idempotency-Key", "same-key")
			statuses[i] = resp.Status
			if id, ok := resp.Data()["id"].(string); ok {
				ids[i] = id
			}
		}()
	}
	wg.Wait()
	made := map[string]bool{}
	for i, st := range statuses {
		if st == 201 {
			made[ids[i]] = true
		} else if st != 409 {
			t.Errorf("replica %d: %d for a concurrent retry of one key (want 201, or 409 while the first is in flight)", i, st)
		}
	}
	if len(made) != 1 {
		t.Errorf("one Idempotency-Key made %d agents: %v", len(made), made)
	}
	list := rs[1].Do("GET", "/api/v1/agents?per_page=100", owner.Token, nil)
	if n := len(list.List()); n != 1 {
		t.Fatalf("%d agents after one idempotent create, want 1", n)
	}

	if _, err := rs[0].Svc.Subscriptions.SetSubscription(ctx, owner.WorkspaceID, data.SubscriptionSet{Limits: map[string]int64{data.LimitAgents: 10}}); err != nil {
		t.Fatal(err)
	}
	var created, refused atomic.Int32
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch r := rs[i%3].Do("POST", "/api/v1/agents", owner.Token, agentBody(fmt.Sprint("A", i))); r.Status {
			case 201:
				created.Add(1)
			case 402, 403, 409, 422, 429:
				if r.Code() == "quota_exceeded" {
					refused.Add(1)
				} else {
					t.Errorf("status %d code %s", r.Status, r.Code())
				}
			default:
				t.Errorf("status %d: %s", r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	if created.Load() != 9 || refused.Load() != 91 { // the idempotent create holds one of the 10
		t.Errorf("%d created and %d refused under a quota of 10 with one agent stored, want 9 and 91", created.Load(), refused.Load())
	}
	if n := len(rs[2].Do("GET", "/api/v1/agents?per_page=100", owner.Token, nil).List()); n != 10 {
		t.Errorf("%d agents stored, want exactly the quota of 10", n)
	}

	nums := make([]int, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nums[i] = rs[i].Do("POST", "/api/v1/numbers", owner.Token, map[string]any{"phone_number": "+14155550199", "provider": "twilio"}).Status
		}()
	}
	wg.Wait()
	if !(nums[0] == 201 && nums[1] == 409 || nums[0] == 409 && nums[1] == 201) {
		t.Errorf("one phone number through two replicas at once: %v, want one 201 and one 409", nums)
	}
}

// Writes from every replica at once keep one unbroken chain per workspace.
func TestReplicasKeepOneAuditChain(t *testing.T) {
	rs := threeReplicas(t, testkit.ReplicaOptions{})
	owner := rs[0].Owner
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rs[i%3].Do("POST", "/api/v1/agents", owner.Token, agentBody(fmt.Sprint("Chain ", i)))
			if r.Status != 201 {
				t.Errorf("create through replica %d: %d %s", i%3, r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	for i, r := range rs {
		v := r.Do("GET", "/api/v1/audit-log/verify", owner.Token, nil)
		testkit.Expect(t, v, 200)
		if v.Data()["intact"] != true || v.Data()["checked"].(float64) < 61 {
			t.Errorf("verify through replica %d: %s", i, v.Body)
		}
	}
}

// A file uploaded through one replica is served and searched by the others.
func TestReplicasShareKnowledgeFiles(t *testing.T) {
	rs := threeReplicas(t, testkit.ReplicaOptions{})
	tok := rs[0].Owner.Token
	kb := rs[0].Do("POST", "/api/v1/knowledge-bases", tok, map[string]any{"name": "FAQ"})
	testkit.Expect(t, kb, 201)
	kbID := kb.Data()["id"].(string)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("files", "refunds.txt")
	content := "Refunds are paid within fourteen days to the card used for the purchase."
	w.Write([]byte(content))
	mw.Close()
	up := rs[0].Do("POST", "/api/v1/knowledge-bases/"+kbID+"/sources/add", tok, body.Bytes(), "Content-Type", mw.FormDataContentType())
	testkit.Expect(t, up, 200)
	files := up.Data()["files"].([]any)
	srcID := files[0].(map[string]any)["id"].(string)
	got := rs[1].Do("GET", "/api/v1/knowledge-bases/"+kbID+"/sources/files/"+srcID+"/content", tok, nil)
	if got.Status != 200 || string(got.Body) != content {
		t.Fatalf("download through replica 1: %d %q", got.Status, got.Body)
	}
	q := rs[2].Do("POST", "/api/v1/knowledge-bases/"+kbID+"/query", tok, map[string]any{"query": "when are refunds paid"})
	testkit.Expect(t, q, 200)
	if !strings.Contains(string(q.Body), "fourteen days") {
		t.Errorf("query through replica 2 missed the uploaded file: %s", q.Body)
	}
}

// deliveryLease is the dispatchers' lease in TestReplicasDeliverEachWebhookOnce: longer
// than a post may take (the post timeout, 10 s), as the dispatcher's own default is, so
// that only a replica's death hands a delivery to another. At 2 s, a post that a loaded
// machine slowed past the lease could be claimed and posted again by another replica.
const deliveryLease = 15 * time.Second

// Every delivery attempt is posted by one replica; a replica that dies mid-post leaves
// its claimed delivery to another once the lease ends; nothing is lost.
func TestReplicasDeliverEachWebhookOnce(t *testing.T) {
	var mu sync.Mutex
	posts := map[string]int{} // webhook-id header → posts
	hang := make(chan struct{})
	var hung atomic.Bool
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		if strings.Contains(readAll(r), `"Hang"`) && hung.CompareAndSwap(false, true) {
			<-hang // the first post of this event never answers: its replica dies meanwhile
			return
		}
		mu.Lock()
		posts[id]++
		mu.Unlock()
	}))
	defer recv.Close()
	defer close(hang)
	rs := threeReplicas(t, testkit.ReplicaOptions{Lease: deliveryLease})
	tok := rs[0].Owner.Token
	testkit.Expect(t, rs[0].Do("POST", "/api/v1/webhooks", tok, map[string]any{"url": recv.URL, "events": []string{"agent.created"}}), 201)
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			testkit.Expect(t, rs[i%3].Do("POST", "/api/v1/agents", tok, agentBody(fmt.Sprint("Hook ", i))), 201)
		}()
	}
	wg.Wait()
	waitUntil(t, 60*time.Second, "30 events delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(posts) == 30
	})
	// Only replica 0 dispatches now; the post of the next event hangs, and replica 0
	// dies meanwhile: its dispatcher is cut without recording the attempt.
	for _, r := range rs[1:] {
		r.Dispatcher.Stop(context.Background())
	}
	testkit.Expect(t, rs[0].Do("POST", "/api/v1/agents", tok, agentBody("Hang")), 201) // its commit wakes replica 0's dispatcher
	waitUntil(t, 30*time.Second, "the hanging post", hung.Load)
	cut, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	rs[0].Dispatcher.Stop(cut)
	cancel()
	// Another replica's dispatcher starts and takes the delivery once the lease ends.
	d := webhook.NewDispatcher(rs[2].Svc.Deliveries, webhook.Config{AllowPrivate: true, Lease: deliveryLease})
	rs[2].PG.SetEventHook(d.Wake)
	d.Start(context.Background())
	defer d.Stop(context.Background())
	waitUntil(t, 60*time.Second, "31 events delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(posts) == 31
	})
	mu.Lock()
	defer mu.Unlock()
	for id, n := range posts {
		if n != 1 {
			t.Errorf("event %s posted %d times; its deliveries:\n%s", id, n, deliveryRows(rs[0], id))
		}
	}
	if t.Failed() {
		for i, r := range rs {
			t.Logf("replica %d log:\n%s", i, r.Logs.String())
		}
	}
}

// deliveryRows lists event id's delivery rows, for a failure's message.
func deliveryRows(r *testkit.Replica, eventID string) string {
	rows, err := r.PG.Pool().Query(context.Background(), `SELECT id, attempt, status, coalesce(error, ''), next_attempt_at, created_at FROM deliveries WHERE event_id = $1 ORDER BY id`, eventID)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, status, msg string
		var attempt int
		var next *time.Time
		var created time.Time
		if err := rows.Scan(&id, &attempt, &status, &msg, &next, &created); err != nil {
			return err.Error()
		}
		fmt.Fprintf(&b, "  %s attempt %d %s %q next %v created %v\n", id, attempt, status, msg, next, created)
	}
	return b.String()
}

func readAll(r *http.Request) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// waitUntil polls cond until it holds or the time is up.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
