package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// drain fans every outboxed event out.
func drain(t *testing.T, svc *service.Services) {
	t.Helper()
	for {
		n, err := svc.Deliveries.FanOut(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// due returns the jobs due at now, by webhook id.
func due(t *testing.T, svc *service.Services, now time.Time) map[string][]*data.DeliveryJob {
	t.Helper()
	jobs, _, err := svc.Deliveries.ClaimDueDeliveries(context.Background(), now, 100, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*data.DeliveryJob{}
	for _, j := range jobs {
		out[j.WebhookID] = append(out[j.WebhookID], j)
	}
	return out
}

// settle delivers every outboxed event and marks each due job delivered: what the
// setup's own events (webhook.created, …) caused is out of the way.
func settle(t *testing.T, svc *service.Services, now time.Time) {
	t.Helper()
	drain(t, svc)
	for _, jobs := range due(t, svc, now) {
		for _, j := range jobs {
			if err := svc.Deliveries.FinishAttempt(context.Background(), j.DeliveryID, data.AttemptOutcome{Succeeded: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// pendingTestDelivery creates a webhook of every event, settles what its creation
// caused, and leaves one delivery pending: its test event's, due at now.
func pendingTestDelivery(t *testing.T, svc *service.Services, ctx context.Context, now time.Time) *data.Webhook {
	t.Helper()
	w, _, err := svc.Webhooks.CreateWebhook(ctx, data.WebhookCreate{URL: "https://a.example/", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, svc, now)
	if _, err := svc.Webhooks.SendTestEvent(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	drain(t, svc)
	return w
}

func TestFanOutFollowsFiltersAndTestTargets(t *testing.T) {
	clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc, store := newServices(t, clock, nil)
	ctx := as("ws_1")
	no := false
	all, secret, _ := svc.Webhooks.CreateWebhook(ctx, data.WebhookCreate{URL: "https://a.example/", Events: []string{"*"}})
	tests, _, _ := svc.Webhooks.CreateWebhook(ctx, data.WebhookCreate{URL: "https://b.example/", Events: []string{data.EventAgentCreated}})
	off, _, _ := svc.Webhooks.CreateWebhook(ctx, data.WebhookCreate{URL: "https://c.example/", Events: []string{"*"}, Enabled: &no})
	other, _, _ := svc.Webhooks.CreateWebhook(as("ws_2"), data.WebhookCreate{URL: "https://d.example/", Events: []string{"*"}})
	settle(t, svc, clock.t)

	// A test event to the disabled webhook goes to it alone.
	ev, err := svc.Webhooks.SendTestEvent(ctx, off.ID)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, svc)
	jobs := due(t, svc, clock.t)
	if len(jobs) != 1 || len(jobs[off.ID]) != 1 {
		t.Fatalf("jobs after a test event to %s: %v", off.ID, jobs)
	}
	j := jobs[off.ID][0]
	var body map[string]any
	if err := json.Unmarshal(j.Body, &body); err != nil || body["id"] != ev.ID || body["type"] != data.EventWebhookTest || j.Attempt != 1 || j.URL != off.URL || !strings.HasPrefix(j.Secret, "whsec_") {
		t.Errorf("job %+v, body %v", j, body)
	}
	if err := svc.Deliveries.FinishAttempt(context.Background(), j.DeliveryID, data.AttemptOutcome{Succeeded: true, ResponseStatus: 204}); err != nil {
		t.Fatal(err)
	}

	// A test event to the "*" webhook: only that one, with the secret returned at create.
	if _, err := svc.Webhooks.SendTestEvent(ctx, all.ID); err != nil {
		t.Fatal(err)
	}
	drain(t, svc)
	jobs = due(t, svc, clock.t)
	if len(jobs) != 1 || len(jobs[all.ID]) != 1 || jobs[all.ID][0].Secret != secret {
		t.Fatalf("jobs after a test event to %s: %v", all.ID, jobs)
	}
	if err := svc.Deliveries.FinishAttempt(context.Background(), jobs[all.ID][0].DeliveryID, data.AttemptOutcome{Succeeded: true}); err != nil {
		t.Fatal(err)
	}

	// Any other event: every enabled webhook of its workspace whose filter names it.
	for _, typ := range []string{data.EventAgentCreated, data.EventAgentDeleted} {
		e := &data.Event{ID: "evt_" + strings.Repeat(typ[6:7], 26), Type: typ, WorkspaceID: "ws_1", Data: []byte(`{}`), CreatedAt: data.NewTime(clock.t)}
		if err := store.Update(context.Background(), func(tx service.Tx) error { return tx.AppendEvent(e) }); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, svc)
	jobs = due(t, svc, clock.t)
	if len(jobs[all.ID]) != 2 || len(jobs[tests.ID]) != 1 || len(jobs[off.ID]) != 0 || len(jobs[other.ID]) != 0 {
		t.Errorf("jobs per webhook: * %d, agent.created %d, disabled %d, other workspace %d; want 2, 1, 0, 0",
			len(jobs[all.ID]), len(jobs[tests.ID]), len(jobs[off.ID]), len(jobs[other.ID]))
	}
}

func TestFinishAttemptRecordsAndQueuesTheRetry(t *testing.T) {
	clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc, _ := newServices(t, clock, nil)
	ctx := as("ws_1")
	w := pendingTestDelivery(t, svc, ctx, clock.t)
	first := due(t, svc, clock.t)[w.ID][0]

	retryAt := clock.t.Add(5 * time.Second)
	if err := svc.Deliveries.FinishAttempt(context.Background(), first.DeliveryID, data.AttemptOutcome{ResponseStatus: 503, Error: "HTTP 503", RetryAt: retryAt}); err != nil {
		t.Fatal(err)
	}
	if jobs := due(t, svc, clock.t); len(jobs) != 0 {
		t.Fatalf("the retry is due before its time: %v", jobs)
	}
	_, next, _ := svc.Deliveries.ClaimDueDeliveries(context.Background(), clock.t, 10, time.Minute, nil)
	if !next.Equal(retryAt) {
		t.Errorf("next due %v, want %v", next, retryAt)
	}
	second := due(t, svc, retryAt)[w.ID]
	if len(second) != 1 || second[0].Attempt != 2 || second[0].EventID != first.EventID {
		t.Fatalf("retry jobs %+v", second)
	}

	// Every attempt keeps its record: the first retrying with its outcome, the second pending.
	list, _, err := svc.Webhooks.ListDeliveries(ctx, w.ID, data.PageRequest{})
	if err != nil || len(list) != 2 {
		t.Fatalf("deliveries %v, %v", list, err)
	}
	old := list[1]
	if old.Status != data.DeliveryRetrying || *old.ResponseStatus != 503 || *old.Error != "HTTP 503" || !old.NextAttemptAt.Equal(retryAt) {
		t.Errorf("first attempt's record %+v", old)
	}
	if list[0].Status != data.DeliveryPending || list[0].Attempt != 2 {
		t.Errorf("second attempt's record %+v", list[0])
	}

	// Failed for good: no further attempt. Retrying it by hand starts over at attempt 1.
	if err := svc.Deliveries.FinishAttempt(context.Background(), second[0].DeliveryID, data.AttemptOutcome{Error: "refused"}); err != nil {
		t.Fatal(err)
	}
	if jobs := due(t, svc, retryAt.Add(time.Hour)); len(jobs) != 0 {
		t.Errorf("a failed delivery is still queued: %v", jobs)
	}
	if _, err := svc.Webhooks.RetryDelivery(ctx, w.ID, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Webhooks.RetryDelivery(ctx, w.ID, list[0].ID); err != nil {
		t.Fatal(err) // a finished delivery may be retried again
	}
	again := due(t, svc, clock.t)[w.ID]
	if len(again) != 2 || again[0].Attempt != 1 {
		t.Errorf("manual retries queued %+v", again)
	}
	if _, err := svc.Webhooks.RetryDelivery(ctx, w.ID, again[0].DeliveryID); data.ErrorCode(err) != data.ECONFLICT {
		t.Errorf("retrying a pending delivery: %v, want conflict", err)
	}

	// A deleted webhook takes its queue along; finishing one of its attempts does nothing.
	if err := svc.Webhooks.DeleteWebhook(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Deliveries.FinishAttempt(context.Background(), again[0].DeliveryID, data.AttemptOutcome{Succeeded: true}); err != nil {
		t.Errorf("finishing a deleted webhook's attempt: %v", err)
	}
	if jobs := due(t, svc, clock.t); len(jobs) != 0 {
		t.Errorf("a deleted webhook's deliveries are queued: %v", jobs)
	}
}

// A claimed delivery is not due for anyone else while its lease runs; a claimer that
// never reports leaves it due again, for the same attempt, once the lease ends.
func TestClaimedDeliveriesAreLeased(t *testing.T) {
	clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc := testkit.Services(t, testkit.OpenEngine(t), func(o *service.Options) {
		o.Now, o.LeaseDeliveries = clock.now, true // as on a store replicas share
	})
	ctx := as("ws_1")
	pendingTestDelivery(t, svc, ctx, clock.t)
	claim := func(at time.Time) ([]*data.DeliveryJob, time.Time) {
		t.Helper()
		jobs, next, err := svc.Deliveries.ClaimDueDeliveries(context.Background(), at, 10, 30*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		return jobs, next
	}
	first, _ := claim(clock.t)
	if len(first) != 1 || first[0].Attempt != 1 {
		t.Fatalf("first claim: %+v", first)
	}
	again, next := claim(clock.t.Add(29 * time.Second))
	if len(again) != 0 {
		t.Fatalf("claimed twice within the lease: %+v", again)
	}
	if want := clock.t.Add(30 * time.Second); !next.Equal(want) {
		t.Errorf("next due %v, want the lease's end %v", next, want)
	}
	after, _ := claim(clock.t.Add(30 * time.Second))
	if len(after) != 1 || after[0].DeliveryID != first[0].DeliveryID || after[0].Attempt != 1 {
		t.Fatalf("after the lease: %+v, want the same delivery's attempt 1", after)
	}
}

// On a store one process owns, a claim writes nothing: what the dispatcher has in flight
// (skip) is passed over, and after a crash the delivery is due at once, not after a lease.
func TestClaimsOnAnOwnedStoreWriteNothing(t *testing.T) {
	testkit.NeedBolt(t)
	clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc, _ := newServices(t, clock, nil)
	ctx := as("ws_1")
	pendingTestDelivery(t, svc, ctx, clock.t)
	first, _, err := svc.Deliveries.ClaimDueDeliveries(context.Background(), clock.t, 10, 30*time.Second, nil)
	if err != nil || len(first) != 1 {
		t.Fatalf("first claim: %v, %v", first, err)
	}
	inFlight := func(id string) bool { return id == first[0].DeliveryID }
	if again, _, _ := svc.Deliveries.ClaimDueDeliveries(context.Background(), clock.t, 10, 30*time.Second, inFlight); len(again) != 0 {
		t.Errorf("the in-flight delivery was claimed again: %v", again)
	}
	// A restarted dispatcher (an empty in-flight set) gets it at once.
	if again, _, _ := svc.Deliveries.ClaimDueDeliveries(context.Background(), clock.t, 10, 30*time.Second, nil); len(again) != 1 {
		t.Errorf("after a restart the delivery is not due at once: %v", again)
	}
}

// abortingStore runs every transaction on the real store and, while abort is set, fails
// it after fn succeeded, as a commit that fails (a lost serialization conflict, a
// cancelled context) does: nothing fn wrote is kept and the caller gets an error.
type abortingStore struct {
	service.Store
	abort atomic.Bool
}

var errCommitFailed = errors.New("the commit failed")

func (s *abortingStore) wrap(fn func(service.Tx) error) func(service.Tx) error {
	return func(tx service.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if s.abort.Load() {
			return errCommitFailed
		}
		return nil
	}
}

func (s *abortingStore) Update(ctx context.Context, fn func(service.Tx) error) error {
	return s.Store.Update(ctx, s.wrap(fn))
}

func (s *abortingStore) View(ctx context.Context, fn func(service.Tx) error) error {
	return s.Store.View(ctx, s.wrap(fn))
}

// A claim whose transaction fails hands out no job: on a shared store its lease was
// rolled back, so posting would race whichever replica claims the delivery next (the
// double posts TestReplicasDeliverEachWebhookOnce caught when a replica stopped mid-claim).
func TestAFailedClaimHandsOutNothing(t *testing.T) {
	for _, leased := range []bool{true, false} {
		t.Run(fmt.Sprint("leased=", leased), func(t *testing.T) {
			clock := &fixedClock{time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
			store := &abortingStore{Store: testkit.OpenEngine(t)}
			svc := testkit.Services(t, store, func(o *service.Options) {
				o.Now, o.LeaseDeliveries = clock.now, leased
			})
			ctx := as("ws_1")
			pendingTestDelivery(t, svc, ctx, clock.t)
			store.abort.Store(true)
			jobs, next, err := svc.Deliveries.ClaimDueDeliveries(context.Background(), clock.t, 10, 30*time.Second, nil)
			store.abort.Store(false)
			if !errors.Is(err, errCommitFailed) || len(jobs) != 0 || !next.IsZero() {
				t.Fatalf("failed claim: jobs %v, next %v, error %v; want none, zero, %v", jobs, next, err, errCommitFailed)
			}
			// Nothing was leased: the delivery is due at once for the next claimer.
			again, _, err := svc.Deliveries.ClaimDueDeliveries(context.Background(), clock.t, 10, 30*time.Second, nil)
			if err != nil || len(again) != 1 || again[0].Attempt != 1 {
				t.Fatalf("claim after the failed one: %v, %v; want the delivery's attempt 1", again, err)
			}
		})
	}
}
