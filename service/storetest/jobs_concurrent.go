package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// claimAsRunners claims as a runner does: through the store's own claim when it has one
// (service.JobClaimStore), else in a write transaction.
func claimAsRunners(s service.Store, c data.JobClaim) ([]*data.JobRecord, error) {
	if cs, ok := s.(service.JobClaimStore); ok {
		jobs, _, err := cs.ClaimJobs(context.Background(), c)
		return jobs, err
	}
	var jobs []*data.JobRecord
	err := s.Update(context.Background(), func(tx service.Tx) (err error) {
		jobs, _, err = tx.ClaimJobs(c)
		return err
	})
	return jobs, err
}

// testJobsConcurrentClaims: eight claimers at once (replicas' runners) drain one
// queue: every job is claimed by exactly one of them, and no claim fails for meeting
// another.
func testJobsConcurrentClaims(t *testing.T, open Opener) {
	s := open(t)
	const n = 200
	var all []*data.JobRecord
	for range n {
		all = append(all, queuedJob(wsIDs[0], "k", jobEpoch))
	}
	enqueue(t, s, all...)
	var mu sync.Mutex
	owners := map[string]string{}
	var wg sync.WaitGroup
	for r := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprint("runner-", r)
			for {
				got, err := claimAsRunners(s, data.JobClaim{Kinds: []string{"k"}, Owner: owner, Now: jobEpoch, LeaseUntil: jobEpoch.Add(time.Minute), Limit: 2})
				if err != nil {
					t.Errorf("%s: claim failed: %v", owner, err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, j := range got {
					if prev, ok := owners[j.ID]; ok {
						t.Errorf("job %s claimed by %s and %s", j.ID, prev, owner)
					}
					owners[j.ID] = owner
					if j.LeaseOwner != owner || j.Attempt != 1 {
						t.Errorf("job %s came back as %+v", j.ID, j)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(owners) != n {
		t.Errorf("%d jobs claimed, want %d", len(owners), n)
	}
	for _, j := range all {
		if st := storedJob(t, s, j.ID); st.LeaseOwner != owners[j.ID] || st.Status != data.JobRunning {
			t.Errorf("job %s stored %+v, claimed by %s", j.ID, st, owners[j.ID])
		}
	}
}
