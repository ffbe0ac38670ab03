package bolt

import (
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// maxJobListScan bounds the jobs one page of GET /api/v1/jobs looks at. The walk goes
// through the workspace's own jobs (jobs_by_ws), never another's; a filter that matches
// few of them (the failed jobs among thousands that succeeded) then still answers
// promptly, with a next_cursor that resumes past what it looked at. Finished jobs are
// pruned after --job-retention, so a workspace's list stays that of a week's work.
const maxJobListScan = 2000

// ListJobs implements service.JobTx: a walk of the workspace's index, newest first, each
// job read once, kept when sel keeps it. The range is judged on the id before the row is
// read.
func (t tx) ListJobs(workspaceID string, sel data.JobSelection, req data.PageRequest) ([]*data.JobRecord, data.Page, error) {
	seen := map[string]*data.JobRecord{}
	var readErr error
	keep := func(id string) bool {
		if !sel.InRange(id) {
			return false
		}
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
	spec := listSpec{index: bucketJobsByWS, scope: workspaceID, filter: jobSelectionKey(sel), keep: keep, maxScan: maxJobListScan}
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
	agents := "*"
	if sel.Agents != nil {
		agents = strings.Join(sel.Agents, ",")
	}
	return strings.Join([]string{"jobs", sel.Kind, sel.Status, sel.AgentID,
		strconv.FormatInt(unixMilliOrZero(sel.From), 10), strconv.FormatInt(unixMilliOrZero(sel.To), 10),
		strings.Join(sel.Kinds, ","), agents}, "\x00")
}
