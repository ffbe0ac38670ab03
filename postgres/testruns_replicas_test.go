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
	race := startTestRunReplicas(t)
	rs := race.replicas
	owner := rs[0].Owner
	agent := createRaceAgent(t, rs, race.stand)
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
		race.checkRunPassedOnOneReplica(t, agent, id)
	}
	checkCasesRanOnce(t, race.log, runs*6)
}

// testRunRace is two replicas racing for test runs, with the log of the cases each ran.
type testRunRace struct {
	stand    *llmtest.Server
	replicas []*testkit.Replica
	log      *raceLog
	mu       sync.Mutex
	cases    map[string]map[string]bool // run id → replicas that ran its cases
}

// startTestRunReplicas starts two replicas on one database that log every case they
// run, on a model whose replies hold a case's run open across the claim of another.
func startTestRunReplicas(t *testing.T) *testRunRace {
	t.Helper()
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond(func(llmtest.Request) llmtest.Reply {
		r := llmtest.Text("Welcome!")
		r.Delay = 5 * time.Millisecond // a case holds its run open across the claim of another
		return r
	})
	race := &testRunRace{stand: stand, cases: map[string]map[string]bool{},
		log: &raceLog{runs: map[string]int{}, by: map[string]int{}, inFlight: map[string]string{}}}
	var replica int
	race.replicas = testkit.NewReplicas(t, 2, testkit.ReplicaOptions{JobPoll: 10 * time.Millisecond, Prepare: func(svc *service.Services) {
		name := fmt.Sprint("replica-", replica)
		replica++
		svc.Conversations.Configure(cli.ConversationOptions(cli.LLMSettings{AllowURLPrefixes: []string{stand.URL + "/"}}))
		svc.TestRuns.OnCase(func(runID, testID string, repeat int) {
			key := fmt.Sprintf("%s/%s/%d", runID, testID, repeat)
			race.log.begin(key, name)
			defer race.log.end(key)
			race.mu.Lock()
			if race.cases[runID] == nil {
				race.cases[runID] = map[string]bool{}
			}
			race.cases[runID][name] = true
			race.mu.Unlock()
		})
	}})
	return race
}

// createRaceAgent creates, through the first replica, an agent on stand's model with
// three tests of two repeats each, and returns its id.
func createRaceAgent(t *testing.T, rs []*testkit.Replica, stand *llmtest.Server) string {
	t.Helper()
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
	return agent
}

// checkRunPassedOnOneReplica waits for the run id to end and checks it passed all six
// cases, its job succeeded on its first attempt, and its cases ran on one replica.
func (race *testRunRace) checkRunPassedOnOneReplica(t *testing.T, agent, id string) {
	t.Helper()
	rs, owner := race.replicas, race.replicas[0].Owner
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
	race.mu.Lock()
	if n := len(race.cases[id]); n != 1 {
		t.Errorf("run %s's cases ran on %d replicas: %v", id, n, race.cases[id])
	}
	race.mu.Unlock()
}

// checkCasesRanOnce checks no case overlapped another run of itself in l, and that want
// cases ran, each once.
func checkCasesRanOnce(t *testing.T, l *raceLog, want int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range l.overlaps {
		t.Error(o)
	}
	if len(l.runs) != want {
		t.Errorf("%d cases ran, want %d", len(l.runs), want)
	}
	for key, n := range l.runs {
		if n != 1 {
			t.Errorf("case %s ran %d times", key, n)
		}
	}
	t.Logf("cases per replica: %v", l.by)
}
