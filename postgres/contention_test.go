package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/internal/pgtest"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// ownCluster starts a PostgreSQL cluster for one test alone (its log counts only that
// test's failures; it may be halted), with a new database for the replicas.
func ownCluster(t *testing.T) (*pgtest.Cluster, string) {
	t.Helper()
	c, err := pgtest.Start()
	if err != nil {
		if err == pgtest.ErrNotInstalled && os.Getenv("CI") != "true" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	url, _, err := c.NewDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c, url
}

// Six writers, two a replica, write into one workspace at once: calls registered,
// agents created and agents updated, a fixed number each. Every answer is a success
// (no 5xx: no write ran out of retries), every write is stored, the audit chain is
// whole, and PostgreSQL logged no serialization failure: writes of one workspace wait
// for its lock instead of failing on its chain head and call counters, and the three
// dispatchers claim outbox rows without fighting over them (issue 24).
func TestReplicasSixWritersIntoOneWorkspace(t *testing.T) {
	cluster, url := ownCluster(t)
	rs := testkit.NewReplicas(t, 3, testkit.ReplicaOptions{URL: url})
	tok := rs[0].Owner.Token
	// A webhook, so that every event is fanned out into a delivery by the dispatchers.
	testkit.Expect(t, rs[0].Do("POST", "/api/v1/webhooks", tok, map[string]any{"url": "http://127.0.0.1:1/hook", "events": []string{"*"}}), 201)
	const writers, rounds = 6, 12 // each round: a call, an agent created, an agent updated
	own := createWriterAgents(t, rs[0], tok, writers)
	before, err := cluster.SerializationFailures()
	if err != nil {
		t.Fatal(err)
	}
	statuses := runWriters(t, rs, tok, own, rounds)
	after, err := cluster.SerializationFailures()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("answers %v; %d serialization failures in PostgreSQL's log during %d writes", statuses, after-before, writers*rounds*3)
	if after != before {
		log, _ := os.ReadFile(cluster.LogPath())
		t.Errorf("%d serialization failures during the writes, want none; the log:\n%s", after-before, lastLines(string(log), 40))
	}

	checkEveryWriteStored(t, rs, tok, own, rounds)
	checkAuditChainIntact(t, rs[0], tok)
}

// createWriterAgents creates one agent for each of n writers through r and returns their
// ids.
func createWriterAgents(t *testing.T, r *testkit.Replica, tok string, n int) []string {
	t.Helper()
	own := make([]string, n)
	for w := range n {
		r := r.Do("POST", "/api/v1/agents", tok, agentBody(fmt.Sprint("writer ", w)))
		testkit.Expect(t, r, 201)
		own[w] = r.Data()["id"].(string)
	}
	return own
}

// runWriters runs one writer for each agent of own, through the replicas in turn, each
// round a call, an agent created and an agent updated. It returns the count of each
// status answered.
func runWriters(t *testing.T, rs []*testkit.Replica, tok string, own []string, rounds int) map[int]int {
	t.Helper()
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for w := range len(own) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rs[w%3]
			for i := range rounds {
				for _, resp := range []*testkit.Response{
					r.Do("POST", "/api/v1/calls", tok, map[string]any{"agent_id": own[w], "direction": "inbound", "from_number": "+14155550100", "to_number": "+14155550101", "metadata": map[string]any{"write": fmt.Sprint(w, "-", i)}}),
					r.Do("POST", "/api/v1/agents", tok, agentBody(fmt.Sprintf("made %d-%d", w, i))),
					r.Do("PUT", "/api/v1/agents/"+own[w], tok, agentBody(fmt.Sprintf("writer %d round %d", w, i))),
				} {
					mu.Lock()
					statuses[resp.Status]++
					mu.Unlock()
					if resp.Status >= 300 {
						t.Errorf("writer %d through replica %d: %d %s", w, w%3, resp.Status, resp.Body)
					}
				}
			}
		}()
	}
	wg.Wait()
	return statuses
}

// checkEveryWriteStored checks every call and agent made is stored and read through
// another replica, and each writer's agent holds its last update.
func checkEveryWriteStored(t *testing.T, rs []*testkit.Replica, tok string, own []string, rounds int) {
	t.Helper()
	writers := len(own)
	calls := map[string]bool{}
	for _, c := range listAll(t, rs[1], "/api/v1/calls", tok) {
		if m, ok := c["metadata"].(map[string]any); ok {
			calls[fmt.Sprint(m["write"])] = true
		}
	}
	agents := map[string]bool{}
	for _, a := range listAll(t, rs[2], "/api/v1/agents", tok) {
		agents[a["name"].(string)] = true
	}
	for w := range writers {
		for i := range rounds {
			if !calls[fmt.Sprint(w, "-", i)] {
				t.Errorf("call %d-%d is not stored", w, i)
			}
			if !agents[fmt.Sprintf("made %d-%d", w, i)] {
				t.Errorf("agent made %d-%d is not stored", w, i)
			}
		}
		if name := rs[w%3].Do("GET", "/api/v1/agents/"+own[w], tok, nil).Data()["name"]; name != fmt.Sprintf("writer %d round %d", w, rounds-1) {
			t.Errorf("writer %d's agent is named %v, want its last update", w, name)
		}
	}
	if len(calls) != writers*rounds {
		t.Errorf("%d calls stored, want %d", len(calls), writers*rounds)
	}
}

// checkAuditChainIntact checks the audit chain is intact after the writes.
func checkAuditChainIntact(t *testing.T, r *testkit.Replica, tok string) {
	t.Helper()
	v := r.Do("GET", "/api/v1/audit-log/verify", tok, nil)
	testkit.Expect(t, v, 200)
	if v.Data()["intact"] != true {
		t.Errorf("the audit chain after the writes: %s", v.Body)
	}
}

// listAll walks a list to its end.
func listAll(t *testing.T, r *testkit.Replica, path, tok string) []map[string]any {
	t.Helper()
	var out []map[string]any
	next := ""
	for range 1000 {
		resp := r.Do("GET", path+"?per_page=100&cursor="+next, tok, nil)
		testkit.Expect(t, resp, 200)
		for _, item := range resp.List() {
			out = append(out, item.(map[string]any))
		}
		cur, _ := resp.JSON()["meta"].(map[string]any)["next_cursor"].(string)
		if cur == "" {
			return out
		}
		next = cur
	}
	t.Fatalf("%s: no last page", path)
	return nil
}

// lastLines is the end of a log, n lines at most.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
