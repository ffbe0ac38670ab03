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
	args := []any{workspaceID}
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	conds := []string{"workspace_id = $1", "kind = ANY(" + arg(sel.Kinds) + "::text[])"}
	if sel.Agents != nil {
		conds = append(conds, "(agent_id IS NULL AND NOT kind = ANY("+arg(nonNil(sel.AgentKinds))+"::text[]) OR agent_id = ANY("+arg(sel.Agents)+"::text[]))")
	}
	if sel.Kind != "" {
		conds = append(conds, "kind = "+arg(sel.Kind))
	}
	if sel.Status != "" {
		conds = append(conds, "status = "+arg(sel.Status))
	}
	if sel.AgentID != "" {
		conds = append(conds, "agent_id = "+arg(sel.AgentID))
	}
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
		cols: jobCols, from: "jobs WHERE " + strings.Join(conds, " AND "), key: "id", args: args,
	}
	return pageRows(t, ks, req, func(rows pgx.Rows) (*data.JobRecord, string, error) {
		j, err := scanJob(rows)
		if err != nil {
			return nil, "", err
		}
		return j, j.ID, nil
	})
}

// nonNil is list, or an empty list for nil: a nil slice is SQL NULL, and NOT kind = ANY(NULL)
// is NULL, which would select no job of no agent at all.
func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
