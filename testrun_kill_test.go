package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// heldModel is a model stand-in whose answers to the agent's requests are counted by the
// caller's message; the first request for held is never answered (its server is killed
// while it waits).
type heldModel struct {
	mu      sync.Mutex
	asked   map[string]int
	held    string
	started chan struct{}
}

func (m *heldModel) respond(r llmtest.Request) llmtest.Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	last := r.LastUserText()
	m.asked[last]++
	if last == m.held && m.asked[last] == 1 {
		close(m.started)
		return llmtest.Hang()
	}
	return llmtest.Text("Welcome to the test kitchen.")
}

func (m *heldModel) count(turn string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.asked[turn]
}

// TestTestRunResumesAfterKill builds the real binary, starts a run of three tests (one
// case at a time), and SIGKILLs the server while the second case waits for the model. The
// restarted server claims the run's job once the dead one's lease ends and goes on where
// it stopped: the first case is not run again, the second runs again, the third runs; the
// run passes with one result per case, test_run.started and test_run.completed are each
// recorded once, and the job succeeds on its second attempt.
func TestTestRunResumesAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	tmp := t.TempDir()
	bin := voiceapiBinary(t)
	model := &heldModel{asked: map[string]int{}, held: "second", started: make(chan struct{})}
	stand := llmtest.New(t, data.LLMInternal)
	stand.Respond(model.respond)

	dataDir := filepath.Join(tmp, "data")
	flags := []string{"--allow-private-urls", "--job-lease", "2s", "--job-poll", "200ms", "--rate-limit", "0", "--test-concurrency", "1"}
	srv, stdout := startServer(t, bin, dataDir, flags...)
	token := bootstrapToken(t, stdout)
	agentID, runID, jobID := startKitchenRun(t, srv.url, token, stand.LLMConfig())
	select {
	case <-model.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the second case did not start")
	}
	srv.cmd.Process.Signal(syscall.SIGKILL)
	srv.cmd.Wait()

	srv, _ = startServer(t, bin, dataDir, flags...)
	final := waitRunFinished(t, srv.url+"/api/v1/agents/"+agentID+"/test-runs/"+runID, token)
	events := map[string]int{}
	status, body := call(t, "GET", srv.url+"/api/v1/audit-log?per_page=100", token, "")
	var log struct{ Data []struct{ Type string } }
	json.Unmarshal(body, &log)
	for _, e := range log.Data {
		if strings.HasPrefix(e.Type, "test_run.") {
			events[e.Type]++
		}
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()

	final.check(t)
	if a, b, c := model.count("first"), model.count("second"), model.count("third"); a != 1 || b != 2 || c != 1 {
		t.Errorf("the model was asked first %d, second %d, third %d times; want 1, 2 (the killed case and its rerun), 1", a, b, c)
	}
	if status != 200 || events["test_run.started"] != 1 || events["test_run.completed"] != 1 || events["test_run.progress"] != 3 {
		t.Errorf("events: %v", events)
	}
	found := false
	for _, j := range storedJobs(t, dataDir) {
		if j.ID != jobID {
			continue
		}
		found = true
		if j.Status != data.JobSucceeded || j.Attempt != 2 {
			t.Errorf("the run's job: %s on attempt %d, want succeeded on attempt 2", j.Status, j.Attempt)
		}
	}
	if !found {
		t.Errorf("the run's job %q is not stored", jobID)
	}
}

// startKitchenRun creates an agent of the model of lc (the caller speaks first) with the
// tests "first", "second" and "third", each a one-turn script of its name, and starts a
// run of them; it returns the agent's, the run's and the run's job's ids.
func startKitchenRun(t *testing.T, url, token string, lc data.LLMConfig) (agentID, runID, jobID string) {
	t.Helper()
	llm, _ := json.Marshal(lc)
	status, body := call(t, "POST", url+"/api/v1/agents", token,
		`{"name":"Kitchen","llm_config":`+string(llm)+`,"prompt_config":{"first_speaker":"user"}}`)
	if status != 201 {
		t.Fatalf("agent: %d %s", status, body)
	}
	var agent struct{ Data struct{ ID string } }
	json.Unmarshal(body, &agent)
	base := url + "/api/v1/agents/" + agent.Data.ID
	for _, turn := range []string{"first", "second", "third"} {
		test := `{"name":"` + turn + `","user":{"script":["` + turn + `"]},"criteria":[{"type":"says","pattern":"Welcome"}]}`
		if status, body := call(t, "POST", base+"/tests", token, test); status != 201 {
			t.Fatalf("test: %d %s", status, body)
		}
	}
	status, body = call(t, "POST", base+"/test-runs", token, `{}`)
	if status != 202 {
		t.Fatalf("run: %d %s", status, body)
	}
	var run struct{ Data struct{ ID string } }
	json.Unmarshal(body, &run)
	return agent.Data.ID, run.Data.ID, jobIDOf(body) // job_id is snake case
}

// finishedRun is what the test reads of a finished run.
type finishedRun struct {
	Data struct {
		Status  string
		Summary data.TestRunSummary
		Results []struct {
			Name    string
			Repeats []struct{ Status string }
		}
	}
}

// waitRunFinished polls the run at url until it finishes, for up to a minute.
func waitRunFinished(t *testing.T, url, token string) finishedRun {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var final finishedRun
	for {
		status, body := call(t, "GET", url, token, "")
		if status != 200 {
			t.Fatalf("run: %d %s", status, body)
		}
		json.Unmarshal(body, &final)
		if data.TestRunFinished(final.Data.Status) {
			return final
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end after the restart: %s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// check holds the run to passed, with one passed repeat for each of the 3 cases.
func (final finishedRun) check(t *testing.T) {
	t.Helper()
	if final.Data.Status != data.TestPassed || final.Data.Summary.Done != 3 || len(final.Data.Results) != 3 {
		t.Errorf("the run after the restart: %+v", final.Data)
	}
	for _, r := range final.Data.Results {
		if len(r.Repeats) != 1 || r.Repeats[0].Status != data.TestPassed {
			t.Errorf("%s: %+v, want one passed repeat", r.Name, r.Repeats)
		}
	}
}

// jobIDOf reads the job_id of a run's response.
func jobIDOf(body []byte) string {
	var r struct {
		Data struct {
			JobID string `json:"job_id"`
		}
	}
	json.Unmarshal(body, &r)
	return r.Data.JobID
}
