package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// checkJobListing fails t unless the list index agrees with the stored jobs.
func checkJobListing(t *testing.T, b *bbolt.DB, when string) {
	t.Helper()
	if err := b.View(jobListingFault); err != nil {
		t.Errorf("%s: %v", when, err)
	}
}

// TestJobListingAgreesWithRecords: after each change a job goes through (enqueue, claim,
// heartbeat, progress, a retry, a failure, a success, a cancel, the end of a dead
// runner's leases, pruning, its workspace's deletion) the list index agrees with the
// stored jobs; a transaction that fails after a transition leaves both as they were.
func TestJobListingAgreesWithRecords(t *testing.T) {
	c := &clock{t: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)}
	db := openInternal(t, c)
	ctx := context.Background()
	step := func(name string, fn func(tx service.Tx) error) {
		t.Helper()
		if err := db.Update(ctx, fn); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkJobListing(t, db.bolt, name)
	}
	newJob := func(ws, agent, kind string) *data.JobRecord {
		j := &data.JobRecord{Job: data.Job{ID: db.ids.New(data.PrefixJob), WorkspaceID: ws, Kind: kind, Status: data.JobQueued,
			MaxAttempts: 3, RunAt: data.NewTime(c.t), CreatedAt: data.NewTime(c.t)}}
		if agent != "" {
			j.AgentID = &agent
		}
		return j
	}
	otherWS := "ws_01JD6000000000000000000002"
	a, b, o := newJob(listWS, rareAgent, "a.work"), newJob(listWS, "", "b.work"), newJob(otherWS, rareAgent, "a.work")
	b.UniqueKey = "once"
	step("enqueue", func(tx service.Tx) error {
		for _, j := range []*data.JobRecord{a, b, o} {
			if _, err := tx.EnqueueJob(j); err != nil {
				return err
			}
		}
		return nil
	})
	claim := func(kinds ...string) map[string]data.JobLease {
		leases := map[string]data.JobLease{}
		step("claim "+fmt.Sprint(kinds), func(tx service.Tx) error {
			claimed, _, err := tx.ClaimJobs(data.JobClaim{Kinds: kinds, Owner: "r1", Now: c.t, LeaseUntil: c.t.Add(time.Minute), Limit: 10})
			for _, j := range claimed {
				leases[j.ID] = j.Lease()
			}
			return err
		})
		return leases
	}
	held := claim("a.work", "b.work")
	if len(held) != 3 {
		t.Fatalf("claimed %d jobs, want 3", len(held))
	}
	step("heartbeat", func(tx service.Tx) error {
		_, err := tx.ExtendJobLease(a.ID, held[a.ID], c.t.Add(2*time.Minute))
		return err
	})
	step("progress", func(tx service.Tx) error {
		_, err := tx.SetJobProgress(a.ID, held[a.ID], data.JobProgress{Done: 1, Total: 2}, "half")
		return err
	})
	step("retry", func(tx service.Tx) error {
		_, err := tx.FinishJob(a.ID, held[a.ID], data.JobOutcome{Status: data.JobQueued, RunAt: c.t, Error: "try again"})
		return err
	})
	again := claim("a.work")
	step("fail", func(tx service.Tx) error {
		_, err := tx.FinishJob(a.ID, again[a.ID], data.JobOutcome{Status: data.JobFailed, At: c.t, Error: "gave up"})
		return err
	})
	step("succeed", func(tx service.Tx) error {
		_, err := tx.FinishJob(b.ID, held[b.ID], data.JobOutcome{Status: data.JobSucceeded, At: c.t})
		return err
	})
	step("cancel", func(tx service.Tx) error {
		_, err := tx.CancelJob(o.ID, c.t)
		return err
	})
	d := newJob(listWS, rareAgent, "b.work")
	step("enqueue another", func(tx service.Tx) error {
		_, err := tx.EnqueueJob(d)
		return err
	})
	claim("b.work")
	step("end a dead runner's leases", func(tx service.Tx) error {
		_, err := tx.EndJobLeases(c.t, nil)
		return err
	})
	rolledBack := errors.New("rolled back")
	if err := db.Update(ctx, func(tx service.Tx) error {
		if ok, err := tx.CancelJob(d.ID, c.t); !ok || err != nil {
			t.Errorf("cancel in the failing transaction: %v, %v", ok, err)
		}
		return rolledBack
	}); !errors.Is(err, rolledBack) {
		t.Fatalf("the failing transaction: %v", err)
	}
	checkJobListing(t, db.bolt, "a failed transaction")
	if running, _ := listJobsPage(t, db, data.JobSelection{Kinds: listKinds, JobFilter: data.JobFilter{Status: data.JobRunning}}, data.PageRequest{}); len(running) != 1 || running[0].ID != d.ID {
		t.Errorf("running jobs after the failed cancel: %v, want %s", jobIDsOf(running), d.ID)
	}
	step("prune", func(tx service.Tx) error {
		n, err := tx.PruneJobs(c.t.Add(time.Hour), 100)
		if n != 3 {
			t.Errorf("pruned %d jobs, want the 3 finished", n)
		}
		return err
	})
	step("delete the workspace", func(tx service.Tx) error { return tx.DeleteWorkspace(listWS) })
	if err := db.bolt.View(func(tx *bbolt.Tx) error {
		if n := tx.Bucket(bucketJobsListed).Stats().KeyN; n != 0 {
			t.Errorf("%d list entries left with no job", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestJobListingBuiltOnUpgrade: a file written at schema 7 has no list index; opening it
// builds the index from its jobs and raises the version, in one transaction: a
// migration that fails (a job it cannot read) leaves version 7 and no entry, and the
// next open builds it all.
func TestJobListingBuiltOnUpgrade(t *testing.T) {
	db, dir, opts := openFile(t)
	ids := storeJobs(t, db, 40)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The file as schema 7 left it, and a job the migration cannot read.
	raw, err := bbolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte("job_zzzzzzzzzzzzzzzzzzzzzzzzzz")
	if err := raw.Update(func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket(bucketJobsListed); err != nil {
			return err
		}
		if err := tx.Bucket(bucketMeta).Put([]byte("schema_version"), binary.BigEndian.AppendUint64(nil, 7)); err != nil {
			return err
		}
		return tx.Bucket(bucketJobs).Put(bad, []byte("{"))
	}); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	if db, err := Open(dir, opts); err == nil {
		db.Close()
		t.Fatal("a migration over an unreadable job succeeded")
	}
	raw, err = bbolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Update(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get([]byte("schema_version")); binary.BigEndian.Uint64(v) != 7 || tx.Bucket(bucketJobsListed) != nil {
			t.Errorf("after the failed migration: version %x, list bucket %v; want 7 and none", v, tx.Bucket(bucketJobsListed) != nil)
		}
		return tx.Bucket(bucketJobs).Delete(bad)
	}); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(); err != nil || v != schemaVersion {
		t.Fatalf("schema version %d, %v; want %d (7 → 8 → 9 → …)", v, err, schemaVersion)
	}
	checkJobListing(t, db.bolt, "after the upgrade")
	failed, _ := listJobsPage(t, db, data.JobSelection{Kinds: listKinds, JobFilter: data.JobFilter{Status: data.JobFailed}}, data.PageRequest{})
	if len(failed) != 1 || failed[0].ID != ids[0] {
		t.Errorf("failed jobs after the upgrade: %v, want %s", jobIDsOf(failed), ids[0])
	}
}

// checkManyAgentsPassOthersUncounted (TestJobListBeyondTheScanBound): a caller limited to
// more agents than one list merges the scopes of walks the workspace's jobs and checks the
// agent on each, passing over the other agents' jobs uncounted: behind more of them than
// maxJobListScan, its first page is its agent's job, alone, with neither cursor. Counted,
// they made that page empty with a next_cursor: how many jobs of agents it may not see,
// told by shape.
func checkManyAgentsPassOthersUncounted(t *testing.T, db *DB, ids []string) {
	agents := []string{rareAgent}
	for i := range data.MaxJobListWalks / len(listKinds) {
		agents = append(agents, fmt.Sprintf("agt_01JD7%021d", i))
	}
	sel := data.JobSelection{Kinds: listKinds, Agents: agents}
	first, page := listJobsPage(t, db, sel, data.PageRequest{PerPage: 15})
	if len(first) != 1 || first[0].ID != ids[0] || page.NextCursor != nil || page.PrevCursor != nil {
		t.Fatalf("first page: %v, %+v; want the rare agent's job alone, neither cursor", jobIDsOf(first), page)
	}
}

// BenchmarkJobListingMigration: the schema 7 → 8 migration's work over a file holding
// 2 × 20,000 jobs (storeJobs), in a transaction rolled back each time, so each run
// builds the whole index. docs/performance.md records the figure.
func BenchmarkJobListingMigration(b *testing.B) {
	db := openInternal(b, &clock{t: time.Now()})
	storeJobs(b, db, 20_000)
	for b.Loop() {
		tx, err := db.bolt.Begin(true)
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.DeleteBucket(bucketJobsListed); err != nil {
			b.Fatal(err)
		}
		if _, err := tx.CreateBucket(bucketJobsListed); err != nil {
			b.Fatal(err)
		}
		if err := listJobsOfStore(tx); err != nil {
			b.Fatal(err)
		}
		tx.Rollback()
	}
}

// TestJobListingPagesStayFull: jobs enqueued one a transaction, as the API queues them,
// append to the end of their scopes, so the index's pages are split nearly full
// (appendFill), as the migration fills them, not half full (bbolt's default): a half
// full index has more pages, and a state change dirties and writes more of them.
func TestJobListingPagesStayFull(t *testing.T) {
	c := &clock{t: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)}
	db := openInternal(t, c)
	for range 1500 {
		j := &data.JobRecord{Job: data.Job{ID: db.ids.New(data.PrefixJob), WorkspaceID: listWS, Kind: "a.work", Status: data.JobQueued,
			MaxAttempts: 3, RunAt: data.NewTime(c.t), CreatedAt: data.NewTime(c.t)}}
		if err := db.Update(context.Background(), func(tx service.Tx) error { _, err := tx.EnqueueJob(j); return err }); err != nil {
			t.Fatal(err)
		}
		c.t = c.t.Add(time.Second)
	}
	var s bbolt.BucketStats
	db.bolt.View(func(tx *bbolt.Tx) error { s = tx.Bucket(bucketJobsListed).Stats(); return nil })
	if fill := float64(s.LeafInuse) / float64(s.LeafPageN*db.bolt.Info().PageSize); s.LeafPageN < 10 || fill < 0.8 {
		t.Errorf("the job list index's %d leaf pages are %.0f%% full, want 80%% or more", s.LeafPageN, 100*fill)
	}
}

// TestJobListingFaultSeesWrongStatus: the consistency check (CheckConsistency) reports a
// pending entry whose value names the other pending status, as it reports one missing:
// in schema 9 the status of a queued or running job is in its entries' values.
func TestJobListingFaultSeesWrongStatus(t *testing.T) {
	c := &clock{t: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)}
	db := openInternal(t, c)
	agent := rareAgent
	j := &data.JobRecord{Job: data.Job{ID: db.ids.New(data.PrefixJob), WorkspaceID: listWS, AgentID: &agent, Kind: "a.work", Status: data.JobQueued,
		MaxAttempts: 3, RunAt: data.NewTime(c.t), CreatedAt: data.NewTime(c.t)}}
	if err := db.Update(context.Background(), func(tx service.Tx) error { _, err := tx.EnqueueJob(j); return err }); err != nil {
		t.Fatal(err)
	}
	checkJobListing(t, db.bolt, "after the enqueue")
	key := indexKey(jobListScope(listWS, true, rareAgent, "a.work", data.JobQueued), j.ID)
	for _, value := range [][]byte{{dueRunning}, nil} {
		err := db.bolt.Update(func(tx *bbolt.Tx) error {
			if err := tx.Bucket(bucketJobsListed).Put(key, value); err != nil {
				return err
			}
			return jobListingFault(tx)
		})
		if err == nil || !strings.Contains(err.Error(), "status calls for") {
			t.Errorf("an entry holding %q for a queued job: %v; want it reported", value, err)
		}
	}
	if err := db.bolt.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketJobsListed).Put(key, []byte{dueQueued}) }); err != nil {
		t.Fatal(err)
	}
}
