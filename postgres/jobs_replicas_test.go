package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// raceLog records, across the replicas of one test process, every run of every job and
// whether two ever overlapped.
type raceLog struct {
	mu       sync.Mutex
	runs     map[string]int    // job id → runs
	by       map[string]int    // replica → runs
	inFlight map[string]string // job id → replica running it now
	overlaps []string
}

func (l *raceLog) begin(jobID, replica string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if other, ok := l.inFlight[jobID]; ok {
		l.overlaps = append(l.overlaps, fmt.Sprintf("%s ran on %s and %s at once", jobID, other, replica))
	}
	l.inFlight[jobID] = replica
	l.runs[jobID]++
	l.by[replica]++
}

func (l *raceLog) end(jobID string) {
	l.mu.Lock()
	delete(l.inFlight, jobID)
	l.mu.Unlock()
}

// TestReplicasRunEachJobOnce: three replicas on one database race for 300 jobs, queued
// through all three while their runners claim: every job runs exactly once, never on two
// replicas at once, and ends succeeded on its first attempt.
func TestReplicasRunEachJobOnce(t *testing.T) {
	const jobs = 300
	rs := threeReplicas(t, testkit.ReplicaOptions{})
	log := &raceLog{runs: map[string]int{}, by: map[string]int{}, inFlight: map[string]string{}}
	for i, r := range rs {
		name := fmt.Sprint("replica-", i)
		r.Svc.Jobs.Register(service.JobKind{Name: "test.race", Module: data.ModuleAgents,
			Handle: func(ctx context.Context, run *service.JobRun) error {
				log.begin(run.Job.ID, name)
				defer log.end(run.Job.ID)
				// A write of the job's own, as real work does: it holds the run open
				// across a round trip to the database.
				return run.Progress(ctx, data.JobProgress{Done: 1, Total: 1}, name)
			}})
		runner := r.Svc.Jobs.NewRunner(service.RunnerOptions{Owner: name, Workers: 4, Poll: 20 * time.Millisecond, Kinds: []string{"test.race"}})
		runner.Start(context.Background())
		t.Cleanup(func() { runner.Stop(context.Background()) })
	}
	ws := rs[0].Owner.WorkspaceID
	var wg sync.WaitGroup
	for i := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs / 3 / 10 {
				err := rs[i].Store.Update(context.Background(), func(tx service.Tx) error {
					for range 10 {
						if _, err := rs[i].Svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: ws, Kind: "test.race"}); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Errorf("replica %d, batch %d: %v", i, b, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	waitUntil(t, 120*time.Second, "every job to succeed", func() bool {
		n := 0
		for _, j := range allJobs(t, rs[0]) {
			if j.Status == data.JobSucceeded {
				n++
			}
		}
		return n == jobs
	})
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, o := range log.overlaps {
		t.Error(o)
	}
	if len(log.runs) != jobs {
		t.Errorf("%d jobs ran, want %d", len(log.runs), jobs)
	}
	for id, n := range log.runs {
		if n != 1 {
			t.Errorf("job %s ran %d times", id, n)
		}
	}
	for _, j := range allJobs(t, rs[0]) {
		if j.Attempt != 1 || j.Checkpoint == "" {
			t.Errorf("job %s: attempt %d, checkpoint %q; want one attempt, with its runner's progress", j.ID, j.Attempt, j.Checkpoint)
		}
	}
	t.Logf("runs per replica: %v", log.by)
}

// allJobs reads every job of the replicas' owner's workspace.
func allJobs(t *testing.T, r *testkit.Replica) []*data.JobRecord {
	t.Helper()
	var out []*data.JobRecord
	err := r.Store.View(context.Background(), func(tx service.Tx) error {
		cursor := ""
		for {
			list, page, err := tx.Jobs(r.Owner.WorkspaceID, data.PageRequest{PerPage: 100, Cursor: cursor})
			if err != nil || page.NextCursor == nil {
				out = append(out, list...)
				return err
			}
			out, cursor = append(out, list...), *page.NextCursor
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
