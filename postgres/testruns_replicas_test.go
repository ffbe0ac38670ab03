package postgres_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestReplicasRaceForTestRuns: two replicas on one database, each with its job runner,
// race for test runs asked through both at once. Each run is claimed by exactly one of
// them: every case of it runs once, on that replica, never on both at once; every run
// passes on its job's first attempt.
func TestReplicasRaceForTestRuns(t *testing.T) {
	const runs = 6
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond(func(llmtest.Request) llmtest.Reply {
		r := llmtest.Text("Welcome!")
		r.Delay = 5 * time.Millisecond // a case holds its run open across the claim of another
		return r
	})
	log := &raceLog{runs: map[string]int{}, by: map[string]int{}, inFlight: map[string]string{}}
	caseReplicas := map[string]map[string]bool{} // run id → replicas that ran its cases
	var mu sync.Mutex
	var replica int
	rs := testkit.NewReplicas(t, 2, testkit.ReplicaOptions{JobPoll: 10 * time.Millisecond, Prepare: func(svc *service.Services) {
		name := fmt.Sprint("replica-", replica)
		replica++
		svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
		svc.TestRuns.OnCase(func(runID, testID string, repeat int) {
			key := fmt.Sprintf("%s/%s/%d", runID, testID, repeat)
			log.begin(key, name)
			defer log.end(key)
			mu.Lock()
			if caseReplicas[runID] == nil {
				caseReplicas[runID] = map[string]bool{}
			}
			caseReplicas[runID][name] = true
			mu.Unlock()
		})
	}})
	owner := rs[0].Owner
	llm, _ := json.Marshal(stand.LLMConfig())
	var cfg map[string]any
	json.Unmarshal(llm, &cfg)
	a := rs[0].Do("POST", "/api/v1/agents", owner.Token, map[string]any{"name": "Race", "llm_config": cfg})
	testkit.Expect(t, a, 201)
	agent := a.Data()["id"].(string)
	for i := range 3 {
		testkit.Expect(t, rs[0].Do("POST", "/api/v1/agents/"+agent+"/tests", owner.Token, map[string]any{
			"name": fmt.Sprint("t", i), "user": map[string]any{"script": []string{"hello"}}, "repeat": 2,
			"criteria": []map[string]any{{"type": "says", "pattern": "Welcome"}}}), 201)
	}
	ids := make(chan string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			r := rs[i%2].Do("POST", "/api/v1/agents/"+agent+"/test-runs", owner.Token, map[string]any{})
			if r.Status != 202 {
				t.Errorf("run %d: %d %s", i, r.Status, r.Body)
				return
			}
			ids <- r.Data()["id"].(string)
		})
	}
	wg.Wait()
	close(ids)
	for id := range ids {
		var run map[string]any
		waitUntil(t, 60*time.Second, "run "+id+" to end", func() bool {
			run = rs[1].Do("GET", "/api/v1/agents/"+agent+"/test-runs/"+id, owner.Token, nil).Data()
			return data.TestRunFinished(run["status"].(string))
		})
		if run["status"] != data.TestPassed || run["summary"].(map[string]any)["done"] != 6.0 {
			t.Errorf("run %s: %v %v", id, run["status"], run["summary"])
		}
		var job map[string]any // its end is stored just after the run's
		waitUntil(t, 10*time.Second, "run "+id+"'s job to end", func() bool {
			job = rs[0].Do("GET", "/api/v1/jobs/"+run["job_id"].(string), owner.Token, nil).Data()
			return data.JobFinished(job["status"].(string))
		})
		if job["attempt"] != 1.0 || job["status"] != data.JobSucceeded {
			t.Errorf("run %s's job: %v", id, job)
		}
		mu.Lock()
		if n := len(caseReplicas[id]); n != 1 {
			t.Errorf("run %s's cases ran on %d replicas: %v", id, n, caseReplicas[id])
		}
		mu.Unlock()
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, o := range log.overlaps {
		t.Error(o)
	}
	if len(log.runs) != runs*6 {
		t.Errorf("%d cases ran, want %d", len(log.runs), runs*6)
	}
	for key, n := range log.runs {
		if n != 1 {
			t.Errorf("case %s ran %d times", key, n)
		}
	}
	t.Logf("cases per replica: %v", log.by)
}
