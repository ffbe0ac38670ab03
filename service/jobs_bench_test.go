package service_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// benchJobs opens the engine the tests run on as production runs it (bbolt with fsync:
// a claim is a commit) and the services with a no-op kind, whose runs count into done.
func benchJobs(b *testing.B, done *sync.WaitGroup) (service.Store, *service.Services) {
	var store service.Store
	if testkit.OnPostgres() {
		store = testkit.OpenEngine(b)
	} else {
		store = testkit.OpenDB(b, func(o *bolt.Options) { o.NoSync = false })
	}
	svc := testkit.Services(b, store, nil)
	svc.Jobs.Register(service.JobKind{Name: "bench.noop", Module: data.ModuleAgents, Handle: func(context.Context, *service.JobRun) error {
		if done != nil {
			done.Done()
		}
		return nil
	}})
	return store, svc
}

// enqueueBench queues n no-op jobs, 500 a transaction.
func enqueueBench(b *testing.B, store service.Store, svc *service.Services, n int) {
	for n > 0 {
		batch := min(n, 500)
		if err := store.Update(context.Background(), func(tx service.Tx) error {
			for range batch {
				if _, err := svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: "ws_1", Kind: "bench.noop", Payload: []byte(`{"call_id":"call_01JD6ZZZZZZZZZZZZZZZZZZZZZ"}`)}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		n -= batch
	}
}

// claimOnce leases up to limit due no-op jobs to owner as a runner does: through the
// store's own claim when it has one (PostgreSQL), else in a write transaction.
func claimOnce(store service.Store, owner string, limit int) (int, error) {
	now := time.Now()
	c := data.JobClaim{Kinds: []string{"bench.noop"}, Owner: owner, Now: now, LeaseUntil: now.Add(time.Minute), Limit: limit}
	if cs, ok := store.(service.JobClaimStore); ok {
		jobs, _, err := cs.ClaimJobs(context.Background(), c)
		return len(jobs), err
	}
	var n int
	err := store.Update(context.Background(), func(tx service.Tx) error {
		jobs, _, err := tx.ClaimJobs(c)
		n = len(jobs)
		return err
	})
	return n, err
}

// BenchmarkJobClaim: one claim transaction of 1 or 16 due jobs out of a queue of
// b.N times that many; jobs/s is the claim throughput of one claimer.
func BenchmarkJobClaim(b *testing.B) {
	for _, batch := range []int{1, 16} {
		b.Run(fmt.Sprint("batch_", batch), func(b *testing.B) {
			store, svc := benchJobs(b, nil)
			enqueueBench(b, store, svc, b.N*batch)
			b.ResetTimer()
			for range b.N {
				if n, err := claimOnce(store, "bench", batch); err != nil || n != batch {
					b.Fatalf("claimed %d, %v", n, err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

// BenchmarkJobClaimParallel: four claimers (as four replicas' runners) take batches of
// 16 from one queue at once; on PostgreSQL they pass over each other's rows (SKIP
// LOCKED), on bbolt they take turns at the single writer.
func BenchmarkJobClaimParallel(b *testing.B) {
	const batch = 16
	store, svc := benchJobs(b, nil)
	enqueueBench(b, store, svc, b.N*batch)
	var claimed, owners atomic.Int64
	b.SetParallelism(2) // two claimers per core: four on the 2-core machine
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		owner := fmt.Sprint("runner-", owners.Add(1))
		for pb.Next() {
			n, err := claimOnce(store, owner, batch)
			if err != nil {
				b.Error(err)
				return
			}
			claimed.Add(int64(n))
		}
	})
	if claimed.Load() != int64(b.N*batch) {
		b.Fatalf("claimed %d jobs of %d", claimed.Load(), b.N*batch)
	}
	b.ReportMetric(float64(claimed.Load())/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkJobRun: a started runner (4 workers) runs b.N queued no-op jobs to their end:
// claim, run, finish: the mechanism's own cost per job, handler aside.
func BenchmarkJobRun(b *testing.B) {
	var done sync.WaitGroup
	store, svc := benchJobs(b, &done)
	enqueueBench(b, store, svc, b.N)
	done.Add(b.N)
	pages := pagesWritten(store)
	b.ResetTimer()
	r := svc.Jobs.NewRunner(service.RunnerOptions{Workers: 4})
	r.Start(context.Background())
	done.Wait()
	r.Stop(context.Background()) // waits for the last outcomes to be stored
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	if written := pagesWritten(store) - pages; written > 0 {
		b.ReportMetric(float64(written)/float64(b.N), "pages/job")
	}
}

// pagesWritten is the pages bbolt's commits have written so far (0 on PostgreSQL): what
// a job's commits cost the disk, steady where their time is not on a shared machine.
func pagesWritten(store service.Store) int64 {
	db, ok := store.(*bolt.DB)
	if !ok {
		return 0
	}
	stats := db.Bolt().Stats()
	return stats.TxStats.GetWrite()
}
