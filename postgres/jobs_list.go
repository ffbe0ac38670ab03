package postgres

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
)

// ListJobs implements service.JobTx: a keyset over the workspace's jobs whose conditions
// are sel's, written so that a filter's index (0019_jobs_list.sql) serves it. The rule
// is data.JobSelection.Keeps, the bbolt engine's too; service/storetest holds both to it.
func (t *tx) ListJobs(workspaceID string, sel data.JobSelection, req data.PageRequest) ([]*data.JobRecord, data.Page, error) {
	return pageRows(t, jobList(workspaceID, sel), req, func(rows pgx.Rows) (*data.JobRecord, string, error) {
		j, err := scanJob(rows)
		if err != nil {
			return nil, "", err
		}
		return j, j.ID, nil
	})
}

// jobList is the keyset of the jobs sel selects in the workspace. The page seeks one
// index of 0019_jobs_list.sql (the first of sel's filters: agent, kind, status; else the
// caller's one kind; else the workspace's jobs) as the first column of its order
// (keyset.within), compared as a range: the plan the server keeps for the prepared
// statement, not knowing the values, could otherwise walk jobs_pkey back from the cursor
// past every job of other values and other workspaces (TestJobListPagesSeekTheirFilter).
// A filter's column is pinned (pinned), so that a time window's bound on id ends the scan
// rather than the value's end (TestJobListPagesStopAtTheirWindow); without a filter, the
// workspace is, for a window (pinnedInOrder: as pinned, the plan as sent walked
// jobs_pkey), so that the window ends the scan rather than the workspace's end
// (TestJobListPagesWithoutAFilterStopAtTheirWindow), and stays a range otherwise, which
// the scan of a page without a window needs alone.
// A caller limited to some agents walks its agents and kinds apart instead (jobWalks).
// The other conditions are checked on the rows the seek meets.
func jobList(workspaceID string, sel data.JobSelection) keyset {
	args := []any{workspaceID}
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	var conds []string
	if !sel.From.IsZero() {
		conds = append(conds, "id >= "+arg(data.IDBound(data.PrefixJob, sel.From)))
	}
	if !sel.To.IsZero() {
		conds = append(conds, "id < "+arg(data.IDBound(data.PrefixJob, sel.To)))
	}
	ks := keyset{
		binding: binding("jobs", workspaceID, sel.Kind, sel.Status, sel.AgentID,
			strconv.FormatInt(unixMilliOrZero(sel.From), 10), strconv.FormatInt(unixMilliOrZero(sel.To), 10),
			strings.Join(sel.Kinds, ","), pagecursor.Agents(sel.Agents)),
		cols: jobCols, key: "id",
	}
	if ks.walks = jobWalks(sel, arg); ks.walks != nil {
		// The walks hold the kinds and the agents; a condition on the agents here would
		// be an OR the planner may read by bitmap, every row of the agents, and sort.
		if sel.Status != "" {
			conds = append(conds, "status = "+arg(sel.Status))
		}
		ks.from, ks.args = "jobs WHERE "+strings.Join(append([]string{"workspace_id = $1"}, conds...), " AND "), args
		return ks
	}
	conds = append(conds, "kind = ANY("+arg(sel.Kinds)+"::text[])")
	if sel.Agents != nil {
		conds = append(conds, "(agent_id IS NULL AND NOT kind = ANY("+arg(nonNil(sel.AgentKinds))+"::text[]) OR agent_id = ANY("+arg(sel.Agents)+"::text[]))")
	}
	oneKind := ""
	if len(sel.Kinds) == 1 {
		oneKind = sel.Kinds[0]
	}
	for _, f := range []struct{ col, value string }{{"agent_id", sel.AgentID}, {"kind", sel.Kind}, {"status", sel.Status}, {"kind", oneKind}} {
		switch {
		case f.value == "":
		case ks.within == "":
			ks.within = f.col
			p := arg(f.value)
			conds = append(conds, pinned(f.col, p))
		default:
			conds = append(conds, f.col+" = "+arg(f.value))
		}
	}
	scope := "workspace_id = $1"
	switch {
	case ks.within != "":
	case !sel.From.IsZero() || !sel.To.IsZero():
		ks.within, scope = "workspace_id", pinnedInOrder("workspace_id", "$1")
	default:
		ks.within, scope = "workspace_id", "workspace_id >= $1 AND workspace_id <= $1"
	}
	ks.from, ks.args = "jobs WHERE "+scope+" AND "+strings.Join(conds, " AND "), args
	return ks
}

// jobWalks are the walks of a page for a caller limited to some agents (sel.Agents)
// without an agent_id filter, which one range of jobs_by_agent serves: each of its agents
// on jobs_by_agent, for the kinds whose jobs work for an agent (sel.AgentKinds), and each
// other kind on jobs_by_kind, whose jobs name no agent (or one of the caller's: the
// selection's condition). The two sets of kinds part the rows between the walks. A page
// then reads at most per_page+1 jobs a walk, however many of other agents lie between
// (TestLimitedJobListWalksEachAgent), where one range of the workspace's jobs passed over
// all of them. Nil when there is no such caller, or the walks would pass
// data.MaxJobListWalks (the bbolt engine's bound on the scopes it merges): that page
// checks the agents on the workspace's jobs, as before.
func jobWalks(sel data.JobSelection, arg func(any) string) []walk {
	if sel.Agents == nil || sel.AgentID != "" {
		return nil
	}
	agentKinds, otherKinds := []string{}, []string{}
	for _, k := range sel.Kinds {
		switch {
		case sel.Kind != "" && k != sel.Kind:
		case slices.Contains(sel.AgentKinds, k):
			agentKinds = append(agentKinds, k)
		default:
			otherKinds = append(otherKinds, k)
		}
	}
	n := len(otherKinds)
	if len(agentKinds) > 0 {
		n += len(sel.Agents)
	}
	if n > data.MaxJobListWalks {
		return nil
	}
	if n == 0 { // no agent, or no kind: nothing, read at once
		return []walk{{col: "agent_id", vals: []string{}}}
	}
	var walks []walk
	if len(agentKinds) > 0 {
		walks = append(walks, walk{col: "agent_id", vals: sel.Agents, also: "kind = ANY(" + arg(agentKinds) + "::text[])"})
	}
	if len(otherKinds) > 0 {
		walks = append(walks, walk{col: "kind", vals: otherKinds, also: "(agent_id IS NULL OR agent_id = ANY(" + arg(sel.Agents) + "::text[]))"})
	}
	return walks
}

// nonNil is list, or an empty list for nil: a nil slice is SQL NULL, and NOT kind = ANY(NULL)
// is NULL, which would select no job of no agent at all.
func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
