package postgres

import (
	"fmt"
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
// The other conditions are checked on the rows the seek meets.
func jobList(workspaceID string, sel data.JobSelection) keyset {
	args := []any{workspaceID}
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	conds := []string{"kind = ANY(" + arg(sel.Kinds) + "::text[])"}
	if sel.Agents != nil {
		conds = append(conds, "(agent_id IS NULL AND NOT kind = ANY("+arg(nonNil(sel.AgentKinds))+"::text[]) OR agent_id = ANY("+arg(sel.Agents)+"::text[]))")
	}
	oneKind := ""
	if len(sel.Kinds) == 1 {
		oneKind = sel.Kinds[0]
	}
	within := ""
	for _, f := range []struct{ col, value string }{{"agent_id", sel.AgentID}, {"kind", sel.Kind}, {"status", sel.Status}, {"kind", oneKind}} {
		switch {
		case f.value == "":
		case within == "":
			within = f.col
			p := arg(f.value)
			conds = append(conds, f.col+" >= "+p+" AND "+f.col+" <= "+p)
		default:
			conds = append(conds, f.col+" = "+arg(f.value))
		}
	}
	scope := "workspace_id = $1"
	if within == "" {
		within, scope = "workspace_id", "workspace_id >= $1 AND workspace_id <= $1"
	}
	if !sel.From.IsZero() {
		conds = append(conds, "id >= "+arg(data.IDBound(data.PrefixJob, sel.From)))
	}
	if !sel.To.IsZero() {
		conds = append(conds, "id < "+arg(data.IDBound(data.PrefixJob, sel.To)))
	}
	return keyset{
		binding: binding("jobs", workspaceID, sel.Kind, sel.Status, sel.AgentID,
			strconv.FormatInt(unixMilliOrZero(sel.From), 10), strconv.FormatInt(unixMilliOrZero(sel.To), 10),
			strings.Join(sel.Kinds, ","), pagecursor.Agents(sel.Agents)),
		cols: jobCols, from: "jobs WHERE " + scope + " AND " + strings.Join(conds, " AND "), key: "id", args: args,
		within: within,
	}
}

// nonNil is list, or an empty list for nil: a nil slice is SQL NULL, and NOT kind = ANY(NULL)
// is NULL, which would select no job of no agent at all.
func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
