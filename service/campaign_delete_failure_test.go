package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// recipientsFaultStore is a store whose deletes of campaign recipients fail with the
// error fault holds, while it holds one: a campaign.delete_recipients batch meeting it.
type recipientsFaultStore struct {
	service.Store
	fault *atomic.Pointer[error]
}

func (s recipientsFaultStore) Update(ctx context.Context, fn func(service.Tx) error) error {
	return s.Store.Update(ctx, func(tx service.Tx) error { return fn(recipientsFaultTx{tx, s.fault}) })
}

type recipientsFaultTx struct {
	service.Tx
	fault *atomic.Pointer[error]
}

func (t recipientsFaultTx) DeleteCampaignRecipients(campaignID string, limit int) (int, error) {
	if err := t.fault.Load(); err != nil {
		return 0, *err
	}
	return t.Tx.DeleteCampaignRecipients(campaignID, limit)
}

// TestCampaignDeleteJobFailsOnLastingFaults: a campaign.delete_recipients batch failing
// with an error that retrying cannot heal (a stored row that does not decode, a violated
// constraint) fails the job at its first run, job.failed naming the reason; the next
// retention sweep queues it again, which deletes the recipients once the fault is gone.
// A failure that may heal (the database unreachable, its disk full, a replica fenced by
// a newer binary: data.ErrStorageSuperseded) is retried, no job.failed sent. Before,
// every failure was retried, a lasting bug for about a week (10,000 attempts).
func TestCampaignDeleteJobFailsOnLastingFaults(t *testing.T) {
	engine := testkit.OpenEngine(t)
	var fault atomic.Pointer[error]
	svc := servicesOn(t, recipientsFaultStore{engine, &fault}, engine, nil)
	ada := mustUser(t, svc, "ada@example.com")
	ctx := testkit.As(ada)
	first := campaignOfTwo(t, svc, ctx, 1)
	ws := first.WorkspaceID
	runOnce := func() {
		t.Helper()
		runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindDeleteCampaignRecipients}, Jitter: noJitter})
		if n, err := runner.RunDue(context.Background()); err != nil || n != 1 {
			t.Fatalf("ran %d jobs: %v, want the delete's", n, err)
		}
	}
	base := 1_000_000
	for _, transient := range []error{
		fmt.Errorf("%w: dial tcp: connection refused", data.ErrStorageUnavailable),
		fmt.Errorf("writing page: %w", syscall.ENOSPC),
		data.ErrStorageSuperseded,
	} {
		c, recipients := deletedBigCampaign(t, svc, ctx, first, base, service.CampaignDeleteBatch+10)
		base += 1_000_000
		fault.Store(&transient)
		runOnce()
		j := deleteJobOf(t, engine, c)
		if j.Status != data.JobQueued || j.Attempt != 1 || j.LastError == nil || !strings.Contains(*j.LastError, transient.Error()) {
			t.Errorf("after a batch failed with %q: job %s, attempt %d, error %v; want queued again after attempt 1, naming it", transient, j.Status, j.Attempt, deref(j.LastError))
		}
		if n := len(jobFailedOf(t, engine, ws, j.ID)); n != 0 {
			t.Errorf("after %q: %d job.failed events, want none (the job is retried)", transient, n)
		}
		if err := engine.Update(context.Background(), func(tx service.Tx) error { // out of the next case's way
			_, err := tx.CancelJob(j.ID, time.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		fault.Store(nil)
		if n := storedRecipients(t, engine, recipients); n != 10 {
			t.Fatalf("%d recipients stored, want the 10 past the delete's batch", n)
		}
	}

	c, recipients := deletedBigCampaign(t, svc, ctx, first, base, service.CampaignDeleteBatch+10)
	var row struct{}
	lasting := fmt.Errorf("decoding recipient rcp_01: %w", json.Unmarshal([]byte(`{"phone_number":`), &row))
	fault.Store(&lasting)
	runOnce()
	j := deleteJobOf(t, engine, c)
	if j.Status != data.JobFailed || j.Attempt != 1 || j.LastError == nil || !strings.Contains(*j.LastError, "decoding recipient rcp_01") {
		t.Fatalf("after a batch failed with %q: job %s, attempt %d, error %q; want failed at its first attempt, naming it", lasting, j.Status, j.Attempt, deref(j.LastError))
	}
	failed := jobFailedOf(t, engine, ws, j.ID)
	if len(failed) != 1 || failed[0].LastError == nil || !strings.Contains(*failed[0].LastError, "decoding recipient rcp_01") ||
		failed[0].CampaignID == nil || *failed[0].CampaignID != c.ID {
		t.Errorf("job.failed events of the job: %+v, want one naming the reason and the campaign", failed)
	}
	// Fixed: the next sweep queues the job again, and it deletes them all.
	fault.Store(nil)
	if _, err := svc.Retention.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	// (It queues the transient cases' canceled jobs again too: each runs.)
	runner := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindDeleteCampaignRecipients}, Jitter: noJitter})
	for {
		n, err := runner.RunDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if n := storedRecipients(t, engine, recipients); n != 0 {
		t.Errorf("%d recipients of the deleted campaign stored after its job, queued again by the sweep, ran; want 0", n)
	}
}

// deleteJobOf is the campaign's newest campaign.delete_recipients job.
func deleteJobOf(t *testing.T, store service.Store, c *data.Campaign) *data.JobRecord {
	t.Helper()
	var out *data.JobRecord
	if err := store.View(context.Background(), func(tx service.Tx) error {
		jobs, _, err := tx.Jobs(c.WorkspaceID, data.PageRequest{PerPage: data.MaxPerPage})
		for _, j := range jobs {
			if out == nil && j.Kind == service.JobKindDeleteCampaignRecipients && string(j.Payload) == fmt.Sprintf(`{"campaign_id":%q}`, c.ID) {
				out = j
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if out == nil {
		t.Fatalf("no delete job of campaign %s", c.ID)
	}
	return out
}

// jobFailedOf returns workspace ws's job.failed events of job id.
func jobFailedOf(t *testing.T, store service.Store, ws, id string) []data.JobFailure {
	t.Helper()
	var out []data.JobFailure
	if err := store.View(context.Background(), func(tx service.Tx) error {
		return tx.EventsAfter(ws, "", func(ev *data.Event) (bool, error) {
			var f data.JobFailure
			if ev.Type == data.EventJobFailed {
				if err := json.Unmarshal(ev.Data, &f); err != nil {
					return false, err
				}
				if f.ID == id {
					out = append(out, f)
				}
			}
			return true, nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTransientStorageByErrno: a disk fault bbolt meets is judged as PostgreSQL's
// SQLSTATE for the same fault: a full disk (53100, which the postgres engine makes
// ENOSPC) and a disk I/O error (class 58) are retried, on both engines; a fault no retry
// heals (a file the process may not write) fails the job. Before, EIO failed a bbolt
// job for good while PostgreSQL's 58030 was retried.
func TestTransientStorageByErrno(t *testing.T) {
	for _, tc := range []struct {
		err       error
		transient bool
	}{
		{&fs.PathError{Op: "write", Path: "voiceapi.db", Err: syscall.ENOSPC}, true},
		{&fs.PathError{Op: "write", Path: "voiceapi.db", Err: syscall.EIO}, true},
		{fmt.Errorf("committing: %w", syscall.EIO), true},
		{&fs.PathError{Op: "open", Path: "voiceapi.db", Err: syscall.EACCES}, false},
		{&fs.PathError{Op: "write", Path: "voiceapi.db", Err: syscall.EBADF}, false},
	} {
		err := fmt.Errorf("deleting a batch: %w", tc.err)
		if got := service.IsTransient(service.TransientStorage(err)); got != tc.transient {
			t.Errorf("%v: transient %v, want %v", tc.err, got, tc.transient)
		}
	}
}

// sqlStateError is a database driver's error naming its SQLSTATE, as PostgreSQL's does.
type sqlStateError string

func (e sqlStateError) Error() string    { return "ERROR: (SQLSTATE " + string(e) + ")" }
func (e sqlStateError) SQLState() string { return string(e) }

// TestTransientStorageBySQLState: a database error's class decides whether a job meets it
// again on its next run. A serialization failure past the store's retries, a statement
// timeout or an exhausted resource must not fail the campaign delete job at once; a
// violated constraint or bad data must.
func TestTransientStorageBySQLState(t *testing.T) {
	for _, tc := range []struct {
		code      string
		transient bool
	}{
		{"40001", true}, {"40P01", true}, {"53200", true}, {"53300", true}, {"57014", true},
		{"57P01", true}, {"58030", true}, {"55P03", true},
		{"23505", false}, {"23503", false}, {"22P02", false}, {"42P01", false}, {"55000", false},
		{"XX000", false}, {"4", false}, {"", false},
	} {
		err := fmt.Errorf("deleting a batch: %w", sqlStateError(tc.code))
		if got := service.IsTransient(service.TransientStorage(err)); got != tc.transient {
			t.Errorf("SQLSTATE %q: transient %v, want %v", tc.code, got, tc.transient)
		}
	}
}
