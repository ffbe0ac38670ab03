package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// wrappedTxStore is a store whose every transaction is wrapped by wrap: a test's faults
// sit in the wrapper's methods.
type wrappedTxStore struct {
	service.Store
	wrap func(service.Tx) service.Tx
}

func (s wrappedTxStore) View(ctx context.Context, fn func(service.Tx) error) error {
	return s.Store.View(ctx, func(tx service.Tx) error { return fn(s.wrap(tx)) })
}

func (s wrappedTxStore) Update(ctx context.Context, fn func(service.Tx) error) error {
	return s.Store.Update(ctx, func(tx service.Tx) error { return fn(s.wrap(tx)) })
}

// firstReadFaultTx is a transaction whose next read of a job's record (a test run, a
// call, a knowledge base or source, a campaign, an upgrade's list: what each kind's
// handler reads first) fails with the error fault holds, once: the fault is spent by the
// read it fails, so the job's end (its Failed hook reads them too) is stored.
type firstReadFaultTx struct {
	service.Tx
	fault *atomic.Pointer[error]
}

// spend returns the fault, once.
func (t firstReadFaultTx) spend() error {
	if err := t.fault.Swap(nil); err != nil {
		return *err
	}
	return nil
}

func (t firstReadFaultTx) TestRun(id string) (*data.StoredTestRun, error) {
	if err := t.spend(); err != nil {
		return nil, err
	}
	return t.Tx.TestRun(id)
}

func (t firstReadFaultTx) Call(id string) (*data.Call, error) {
	if err := t.spend(); err != nil {
		return nil, err
	}
	return t.Tx.Call(id)
}

func (t firstReadFaultTx) CallRollups(ws, agentID string, from, to time.Time, step time.Duration) ([]data.CallBucket, error) {
	if err := t.spend(); err != nil {
		return nil, err
	}
	return t.Tx.CallRollups(ws, agentID, from, to, step)
}

func (t firstReadFaultTx) KnowledgeBase(id string) (*data.KnowledgeBase, error) {
	if err := t.spend(); err != nil {
		return nil, err
	}
	return t.Tx.KnowledgeBase(id)
}

func (t firstReadFaultTx) KnowledgeSource(kbID, sourceID string) (*data.KnowledgeSource, error) {
	if err := t.spend(); err != nil {
		return nil, err
	}
	return t.Tx.KnowledgeSource(kbID, sourceID)
}

func (t firstReadFaultTx) Campaign(id string) (*data.Campaign, error) {
	if err := t.spend(); err != nil {
		return nil, err
	}
	return t.Tx.Campaign(id)
}

func (t firstReadFaultTx) ConversationsToRedact(ws string, limit int) ([]string, error) {
	if err := t.spend(); err != nil {
		return nil, err
	}
	return t.Tx.ConversationsToRedact(ws, limit)
}

func (t firstReadFaultTx) StartsToNote(ws string, limit int) ([]data.KeptResponse, error) {
	if err := t.spend(); err != nil {
		return nil, err
	}
	return t.Tx.StartsToNote(ws, limit)
}

func (t firstReadFaultTx) AgentResponses(agentID string, limit int) ([]data.KeptResponse, error) {
	if err := t.spend(); err != nil {
		return nil, err
	}
	return t.Tx.AgentResponses(agentID, limit)
}

func (t firstReadFaultTx) DeleteTokenResponses(tokenID int64, limit int) (int, error) {
	if err := t.spend(); err != nil {
		return 0, err
	}
	return t.Tx.DeleteTokenResponses(tokenID, limit)
}

func (t firstReadFaultTx) AgentsToSeal(ws string, limit int) ([]string, error) {
	if err := t.spend(); err != nil {
		return nil, err
	}
	return t.Tx.AgentsToSeal(ws, limit)
}

// TestJobKindsFailOnLastingStorageFaults: every job kind, not only the campaign delete's,
// fails its job at the first run when storage answers with a fault that no retry heals
// (a stored row that does not decode), job.failed naming it; a fault that heals by itself
// (the database unreachable) queues the job again, naming it, no job.failed sent. One
// kind of each family: test runs, analysis (a call's, a backfill), knowledge (a url
// fetch, embeddings), campaign starts, the upgrade jobs, the cut of a deleted agent's
// kept answers and the delete of a deleted token's. Before, the test run,
// backfill, knowledge, campaign start and upgrade jobs retried every storage fault for
// their whole attempt budget, and the call analysis failed at once on any, healing or
// not. Both engines (VOICEAPI_TEST_BACKEND=postgres).
func TestJobKindsFailOnLastingStorageFaults(t *testing.T) {
	engine := testkit.OpenEngine(t)
	var fault atomic.Pointer[error]
	svc := servicesOn(t, wrappedTxStore{engine, func(tx service.Tx) service.Tx { return firstReadFaultTx{tx, &fault} }}, engine, nil)
	ws := mustUser(t, svc, "ada@example.com").PersonalWorkspaceID
	day := data.NewTime(time.Now().Add(-24 * time.Hour))
	to := data.NewTime(time.Now())
	payloads := map[string]any{
		service.JobKindTestRun:            map[string]string{"run_id": "trn_01JD6ZZZZZZZZZZZZZZZZZZZZZ"},
		service.JobKindAnalyzeCall:        map[string]string{"call_id": "call_01JD6ZZZZZZZZZZZZZZZZZZZZZ"},
		service.JobKindAnalysisBackfill:   map[string]any{"agent_id": "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ", "from": day, "to": to},
		service.JobKindFetchURL:           map[string]any{"knowledge_base_id": "kb_01JD6ZZZZZZZZZZZZZZZZZZZZZ", "source_id": "src_01JD6ZZZZZZZZZZZZZZZZZZZZZ", "attempt": 1},
		service.JobKindEmbed:              map[string]string{"knowledge_base_id": "kb_01JD6ZZZZZZZZZZZZZZZZZZZZZ"},
		"campaign.start":                  map[string]string{"campaign_id": "cmp_01JD6ZZZZZZZZZZZZZZZZZZZZZ"},
		service.JobKindRedactEnded:        map[string]string{},
		service.JobKindSealHeaders:        map[string]string{},
		service.JobKindNoteStarts:         map[string]string{},
		service.JobKindCutKeptAnswers:     map[string]string{"agent_id": "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ"},
		service.JobKindDeleteTokenAnswers: map[string]int64{"token_id": 7},
	}
	var row struct{}
	lasting := fmt.Errorf("decoding the job's record: %w", json.Unmarshal([]byte(`{"id":`), &row))
	healing := fmt.Errorf("%w: dial tcp: connection refused", data.ErrStorageUnavailable)
	n := 0
	for kind, payload := range payloads {
		for _, c := range []struct {
			fault  error
			status string
		}{{lasting, data.JobFailed}, {healing, data.JobQueued}} {
			t.Run(fmt.Sprintf("%s/%s", kind, c.status), func(t *testing.T) {
				n++
				raw, _ := json.Marshal(payload)
				id := fmt.Sprintf("job_01JD6ZZZZZZZZZZZZZZZZZZZ%02d", n)
				now := data.NewTime(time.Now().Add(-time.Second))
				if err := engine.Update(context.Background(), func(tx service.Tx) error {
					_, err := tx.EnqueueJob(&data.JobRecord{Job: data.Job{ID: id, WorkspaceID: ws, Kind: kind, Status: data.JobQueued,
						MaxAttempts: 5, RunAt: now, CreatedAt: now}, Payload: raw})
					return err
				}); err != nil {
					t.Fatal(err)
				}
				fault.Store(&c.fault)
				runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{kind}, Jitter: noJitter})
				if ran, err := runner.RunDue(context.Background()); err != nil || ran != 1 {
					t.Fatalf("ran %d jobs: %v, want this one", ran, err)
				}
				if fault.Load() != nil {
					t.Fatal("the handler never read what the fault fails")
				}
				j := jobByID(t, engine, id)
				if j.Status != c.status || j.Attempt != 1 || j.LastError == nil || !strings.Contains(*j.LastError, c.fault.Error()) {
					t.Errorf("after %q: job %s, attempt %d, error %q; want %s after attempt 1, naming it", c.fault, j.Status, j.Attempt, deref(j.LastError), c.status)
				}
				failed := jobFailedOf(t, engine, ws, id)
				if want := map[string]int{data.JobFailed: 1, data.JobQueued: 0}[c.status]; len(failed) != want ||
					want == 1 && (failed[0].LastError == nil || !strings.Contains(*failed[0].LastError, c.fault.Error())) {
					t.Errorf("after %q: job.failed events %+v, want %d naming it", c.fault, failed, want)
				}
				if err := engine.Update(context.Background(), func(tx service.Tx) error { // out of the next case's way
					_, err := tx.CancelJob(id, time.Now())
					return err
				}); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// jobByID reads job id as stored.
func jobByID(t *testing.T, store service.Store, id string) *data.JobRecord {
	t.Helper()
	var out *data.JobRecord
	if err := store.View(context.Background(), func(tx service.Tx) (err error) {
		out, err = tx.Job(id)
		return err
	}); err != nil || out == nil {
		t.Fatalf("job %s: %v, %v", id, out, err)
	}
	return out
}
