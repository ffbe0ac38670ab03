package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"jobs_list_hidden_agents_uncounted", testJobsListHiddenAgentsUncounted})
}

// testJobsListHiddenAgentsUncounted: a caller limited to more agents than one list
// walks apart (data.MaxJobListWalks) reads the workspace's jobs and checks the agent on
// each; the jobs of agents it may not see shape none of its pages, however many lie
// before its own. bbolt counted them against its page bound (2,000): behind more, the
// first page came back empty with a next_cursor.
func testJobsListHiddenAgentsUncounted(t *testing.T, open Opener) {
	s := open(t)
	const ws = "ws_01JD6000000000000000000077"
	kinds := []string{"a.work", "b.work"}
	var agents []string
	for i := range data.MaxJobListWalks / len(kinds) {
		agents = append(agents, fmt.Sprintf("agt_01JD7%021d", i))
	}
	hidden := "agt_01JD8000000000000000000001"
	g := stepIDs()
	job := func(agent string) *data.JobRecord {
		j := queuedJob(ws, kinds[0], jobEpoch)
		j.ID, j.AgentID = g.New(data.PrefixJob), &agent
		return j
	}
	mine := job(agents[0])
	jobs := []*data.JobRecord{mine}
	for range 2100 { // newer than the caller's: more than any page bound
		jobs = append(jobs, job(hidden))
	}
	enqueue(t, s, jobs...)
	sel := data.JobSelection{Kinds: kinds, Agents: agents, AgentKinds: kinds}
	view(t, s, func(tx service.Tx) error {
		list, page, err := tx.ListJobs(ws, sel, data.PageRequest{PerPage: 15})
		ids := []string{}
		for _, j := range list {
			ids = append(ids, j.ID)
		}
		if err != nil || !slices.Equal(ids, []string{mine.ID}) || page.NextCursor != nil || page.PrevCursor != nil {
			t.Errorf("first page: %v, next %v, prev %v, %v; want the caller's one job, neither cursor",
				ids, page.NextCursor != nil, page.PrevCursor != nil, err)
		}
		return nil
	})
}
