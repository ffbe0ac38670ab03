package postgres_test

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// dialLog records every task handed out, by recipient and attempt; a second hand-out of
// one attempt is the failure the claim exists to prevent.
type dialLog struct {
	mu    sync.Mutex
	seen  map[string]int
	twice []string
}

func (l *dialLog) add(task map[string]any) {
	key := fmt.Sprintf("%s/%v", task["recipient_id"], task["attempt"])
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[key]++
	if l.seen[key] == 2 {
		l.twice = append(l.twice, key)
	}
}

// campaignRecipients is the size of TestReplicasDialEachAttemptOnce's campaign:
// VOICEAPI_CAMPAIGN_RECIPIENTS, else 2,000, which keeps CI's -race pass within its budget
// (10,000 take 9 to 18 minutes under -race on a 2-core machine).
func campaignRecipients(t *testing.T) int {
	v := os.Getenv("VOICEAPI_CAMPAIGN_RECIPIENTS")
	if v == "" {
		return 2_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("VOICEAPI_CAMPAIGN_RECIPIENTS=%q: want a positive whole number", v)
	}
	return n
}

// 3 replicas and 6 concurrent claimers (two a replica) work a campaign of n recipients
// (campaignRecipients) to its end: a third answer no_answer the first time and are dialed
// again after the backoff. Every attempt is handed out exactly once: n plus the third
// dials in all, exactly. The 10,000-recipient run, which passed, is
//
//	VOICEAPI_CAMPAIGN_RECIPIENTS=10000 go test -race -run TestReplicasDialEachAttemptOnce ./postgres
func TestReplicasDialEachAttemptOnce(t *testing.T) {
	n := campaignRecipients(t)
	if testing.Short() {
		t.Skipf("%d recipients over three replicas", n)
	}
	var now atomic.Int64
	now.Store(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	rs := threeReplicas(t, testkit.ReplicaOptions{Now: clock})
	key := startSetup(t, rs[0], "+14155550123")
	owner := rs[0].Owner.Token
	campaign := createLoadCampaign(t, rs[0], rs[1], n)

	d := &dialClaimers{replicas: rs, key: key, log: &dialLog{seen: map[string]int{}}}
	d.work(t)
	now.Add(int64(2 * time.Minute)) // past the backoff
	d.work(t)

	checkEachAttemptDialedOnce(t, d, n)
	checkCampaignAnswered(t, rs[2], owner, campaign, n)
}

// createLoadCampaign creates, through r1, a campaign of n recipients on r0's agent and
// number, retrying no_answer once after a minute, and returns its id.
func createLoadCampaign(t *testing.T, r0, r1 *testkit.Replica, n int) string {
	t.Helper()
	owner := r0.Owner.Token
	agents := r0.Do("GET", "/api/v1/agents", owner, nil)
	agent := agents.List()[0].(map[string]any)["id"].(string)
	numbers := r0.Do("GET", "/api/v1/numbers", owner, nil)
	number := numbers.List()[0].(map[string]any)["id"].(string)

	recipients := make([]any, n)
	for i := range n {
		recipients[i] = map[string]any{"phone_number": fmt.Sprintf("+1415%07d", 2_000_000+i)}
	}
	c := r1.Do("POST", "/api/v1/campaigns", owner, map[string]any{"name": "Load", "agent_id": agent, "number_id": number,
		"window":         map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "start": "00:00", "end": "23:59"},
		"max_concurrent": 1000, "recipients": recipients,
		"retry": map[string]any{"on": []string{"no_answer"}, "max_attempts": 2, "backoff_minutes": 1}})
	testkit.Expect(t, c, 201)
	return c.Data()["id"].(string)
}

// dialClaimers are six claimers (two a replica) sharing one dial log.
type dialClaimers struct {
	replicas []*testkit.Replica
	key      string
	log      *dialLog
	retried  atomic.Int64 // the attempts reported no_answer
}

// work runs the six claimers until each finds nothing due; a third of the numbers
// answer no_answer on their first attempt.
func (d *dialClaimers) work(t *testing.T) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := d.replicas[i%3]
			for {
				resp := testkit.Request(t, r.URL, "POST", "/api/v1/dial-tasks/claim", d.key, map[string]any{"max": 100})
				if resp.Status != 200 {
					t.Errorf("claim: %d %s", resp.Status, resp.Body)
					return
				}
				tasks := resp.Data()["tasks"].([]any)
				if len(tasks) == 0 {
					return
				}
				for _, x := range tasks {
					task := x.(map[string]any)
					d.log.add(task)
					body := map[string]any{"status": "ended", "disconnection_reason": "user_hangup"}
					var phone int
					fmt.Sscanf(task["to_number"].(string), "+1415%07d", &phone)
					if task["attempt"] == float64(1) && phone%3 == 0 {
						body = map[string]any{"status": "failed", "disconnection_reason": "no_answer"}
						d.retried.Add(1)
					}
					id := task["call"].(map[string]any)["id"].(string)
					if u := testkit.Request(t, r.URL, "PUT", "/api/v1/calls/"+id, d.key, body); u.Status != 204 {
						t.Errorf("report %s: %d %s", id, u.Status, u.Body)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// checkEachAttemptDialedOnce checks every attempt was handed out exactly once: n plus
// the retried third in all.
func checkEachAttemptDialedOnce(t *testing.T, d *dialClaimers, n int) {
	t.Helper()
	if len(d.log.twice) > 0 {
		t.Fatalf("%d attempts handed out twice, e.g. %v", len(d.log.twice), d.log.twice[:min(5, len(d.log.twice))])
	}
	third := 0 // the numbers answering no_answer first
	for i := range n {
		if (2_000_000+i)%3 == 0 {
			third++
		}
	}
	if len(d.log.seen) != n+third || d.retried.Load() != int64(third) {
		t.Fatalf("%d attempts dialed, want %d (%d retried, want %d)", len(d.log.seen), n+third, d.retried.Load(), third)
	}
}

// checkCampaignAnswered checks the campaign ended completed. The retried third answer
// their second call: every recipient ends answered.
func checkCampaignAnswered(t *testing.T, r *testkit.Replica, owner, campaign string, n int) {
	t.Helper()
	got := r.Do("GET", "/api/v1/campaigns/"+campaign, owner, nil).Data()
	counts := got["counts"].(map[string]any)
	completed := counts["completed"].(map[string]any)
	if got["status"] != "completed" || completed["answered"] != float64(n) || len(completed) != 1 || counts["exhausted"] != float64(0) {
		t.Fatalf("campaign %v, counts %v", got["status"], counts)
	}
}
