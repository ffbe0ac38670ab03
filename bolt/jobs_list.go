package bolt

import (
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
)

// maxJobListScan bounds the jobs one page of GET /api/v1/jobs reads and passes over. A
// page walks the index scopes of its filters and of what the caller may read
// (jobs_index.go), so every job it reads matches, and the bound is never reached, but
// for a caller limited to more agents than jobListPlan merges: its walk
// checks the agent on each job, and a page that reaches the bound before it is full
// ends there with a next_cursor that resumes past what it looked at.
const maxJobListScan = 2000

// maxJobListPass bounds the index entries of the other pending status one page of queued
// or running jobs passes over (jobs_index.go: both share a scope), by key and value
// alone, no job read: a page of running jobs passes over the whole queue before it, a
// page of queued ones over the running jobs. A page that reaches it ends as one that
// reaches maxJobListScan does. A variable for the tests.
var maxJobListPass = 100_000

// ListJobs implements service.JobTx: a merged walk of the scopes sel names, newest first,
// from/to a seek in it, each job read once and kept when sel keeps it (always, but for
// the caller's agents past data.MaxJobListWalks); for queued or running, the entries of the
// other pending status passed over by their value, no job read.
func (t tx) ListJobs(workspaceID string, sel data.JobSelection, req data.PageRequest) ([]*data.JobRecord, data.Page, error) {
	seen := map[string]*data.JobRecord{}
	var readErr error
	keep := func(id string) bool {
		j, err := readJob(t.b, id)
		if err != nil {
			readErr = err
		}
		if j == nil || !sel.Keeps(&j.Job) {
			return false
		}
		seen[id] = j
		return true
	}
	scopes, otherAgents := jobListWalk(workspaceID, sel)
	spec := listSpec{index: bucketJobsListed, scope: workspaceID, scopes: scopes, filter: jobSelectionKey(sel),
		keep: keep, maxScan: maxJobListScan, value: jobListValue(sel.Status), maxPass: maxJobListPass}
	if otherAgents {
		// The jobs of agents the caller may not see are passed over uncounted, by neither
		// bound, as PostgreSQL's page passes over them: counted, they made its pages short
		// or empty where they lay thick, telling how many there were. Every job is then
		// kept, so neither bound ends a page; finished jobs are pruned (--job-retention).
		spec.admit, spec.keep, spec.maxPass = func(id []byte) bool { return keep(string(id)) }, nil, 0
	}
	if !sel.From.IsZero() {
		spec.lo = data.IDBound(data.PrefixJob, sel.From)
	}
	if !sel.To.IsZero() {
		spec.hi = data.IDBound(data.PrefixJob, sel.To)
	}
	ids, page, err := t.db.list(t.b, spec, req)
	if err == nil {
		err = readErr
	}
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.JobRecord, 0, len(ids))
	for _, id := range ids {
		list = append(list, seen[id])
	}
	return list, page, nil
}

// jobSelectionKey names sel in a list's cursors: a cursor taken under one selection
// (filters, or another caller's access) is refused by another.
func jobSelectionKey(sel data.JobSelection) string {
	return strings.Join([]string{"jobs", sel.Kind, sel.Status, sel.AgentID,
		strconv.FormatInt(unixMilliOrZero(sel.From), 10), strconv.FormatInt(unixMilliOrZero(sel.To), 10),
		strings.Join(sel.Kinds, ","), pagecursor.Agents(sel.Agents)}, "\x00")
}
