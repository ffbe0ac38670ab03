package bolt

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// bucketJobsListed indexes each job under the scopes a list of GET /api/v1/jobs walks
// (keys "<scope>\x00<job id>", empty values), so that a page reads only the jobs it
// shows whatever its filters (docs/jobs.md, "What a page costs"). The kind is part of
// every scope because a caller reads only the kinds of its modules: a list merges the
// scopes of the kinds it may read, so a kind it may not read costs it nothing.
//
//	"<ws>/k/<kind>"                          every job of the kind
//	"<ws>/k/<kind>/s/<status>"               those in the status
//	"<ws>/a/<agent>/k/<kind>"                those working for the agent ("" for none)
//	"<ws>/a/<agent>/k/<kind>/s/<status>"     and in the status
//
// A job's status scopes move in the transaction that changes its status (writeJob).
var bucketJobsListed = []byte("jobs_listed")

func init() { allBuckets = append(allBuckets, bucketJobsListed) }

// jobListScope is the scope of ws's jobs of kind, of agent when forAgent ("" for the
// jobs of none), of status when not "".
func jobListScope(ws string, forAgent bool, agent, kind, status string) string {
	s := ws
	if forAgent {
		s += "/a/" + agent
	}
	s += "/k/" + kind
	if status != "" {
		s += "/s/" + status
	}
	return s
}

// jobListScopes returns the scopes j is listed under; none for nil.
func jobListScopes(j *data.JobRecord) []string {
	if j == nil {
		return nil
	}
	agent := jobAgent(j)
	return []string{
		jobListScope(j.WorkspaceID, false, "", j.Kind, ""),
		jobListScope(j.WorkspaceID, false, "", j.Kind, j.Status),
		jobListScope(j.WorkspaceID, true, agent, j.Kind, ""),
		jobListScope(j.WorkspaceID, true, agent, j.Kind, j.Status),
	}
}

func jobAgent(j *data.JobRecord) string {
	if j.AgentID == nil {
		return ""
	}
	return *j.AgentID
}

// moveJobListing moves job id's list entries from old's scopes to next's (either nil: a
// new or a deleted job): only those that differ, a status's when the status changes.
func moveJobListing(tx *bbolt.Tx, id string, old, next *data.JobRecord) error {
	b := tx.Bucket(bucketJobsListed)
	b.FillPercent = appendFill // ids are time-ordered: a scope grows at its end
	was, is := jobListScopes(old), jobListScopes(next)
	for _, s := range was {
		if !slices.Contains(is, s) {
			if err := indexDelete(b, s, id); err != nil {
				return err
			}
		}
	}
	for _, s := range is {
		if !slices.Contains(was, s) {
			if err := indexPut(b, s, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// listJobsOfStore lists every stored job under its scopes: the schema 7 → 8 migration,
// which builds the index from the jobs of a file written before it (in the transaction
// that raises the version, so a crash leaves the old version to build it again). The
// entries are put in key order: bbolt splits a node only at commit, so a transaction's
// puts in random order each shift a node that holds all the ones before (40,000 jobs
// took 94 s so, docs/performance.md).
func listJobsOfStore(tx *bbolt.Tx) error {
	var keys [][]byte
	if err := tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
		var j data.JobRecord
		if err := jsonUnmarshal(v, &j); err != nil {
			return fmt.Errorf("job %s: %w", k, err)
		}
		for _, s := range jobListScopes(&j) {
			keys = append(keys, indexKey(s, string(k)))
		}
		return nil
	}); err != nil {
		return err
	}
	slices.SortFunc(keys, bytes.Compare)
	b := tx.Bucket(bucketJobsListed)
	b.FillPercent = appendFill
	for _, k := range keys {
		if err := b.Put(k, nil); err != nil {
			return err
		}
	}
	return nil
}

// jobListingFault walks the stored jobs and the list index and returns the first way
// they disagree (an entry missing, or one left behind), nil when the index holds exactly
// the entries the jobs call for. CheckConsistency runs it.
func jobListingFault(tx *bbolt.Tx) error {
	want := map[string]bool{}
	if err := tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
		var j data.JobRecord
		if err := jsonUnmarshal(v, &j); err != nil {
			return fmt.Errorf("job %s: %w", k, err)
		}
		for _, s := range jobListScopes(&j) {
			want[string(indexKey(s, string(k)))] = true
		}
		return nil
	}); err != nil {
		return err
	}
	if err := tx.Bucket(bucketJobsListed).ForEach(func(k, _ []byte) error {
		if !want[string(k)] {
			return fmt.Errorf("job list entry %q is left behind: its job is not in that scope", k)
		}
		delete(want, string(k))
		return nil
	}); err != nil {
		return err
	}
	missing := slices.Sorted(maps.Keys(want))
	if len(missing) > 0 {
		return fmt.Errorf("job list entry %q is missing (and %d more)", missing[0], len(missing)-1)
	}
	return nil
}

// maxJobListScopes bounds the scopes one list merges. A caller limited to many agents
// would merge a scope per agent and kind; past the bound its list walks the workspace's
// scopes instead and checks the agent on each job, under maxJobListScan.
const maxJobListScopes = 128

// jobListPlan returns the scopes of ws whose union is sel's jobs: exactly them, but for
// a caller limited to more agents than maxJobListScopes allows, whose agents are then
// checked on each job read.
func jobListPlan(ws string, sel data.JobSelection) []string {
	kinds := []string{}
	for _, k := range sel.Kinds {
		if sel.Kind == "" || k == sel.Kind {
			kinds = append(kinds, k)
		}
	}
	var agents []string // nil: the workspace's scopes
	switch {
	case sel.AgentID != "" && sel.Agents != nil && !slices.Contains(sel.Agents, sel.AgentID):
		return []string{} // an agent the caller may not see has no jobs for it
	case sel.AgentID != "":
		agents = []string{sel.AgentID}
	case sel.Agents != nil && (len(sel.Agents)+1)*len(kinds) <= maxJobListScopes:
		agents = append(slices.Clone(sel.Agents), "") // and the jobs working for no agent
	}
	scopes := []string{}
	for _, k := range kinds {
		if agents == nil {
			scopes = append(scopes, jobListScope(ws, false, "", k, sel.Status))
		}
		for _, a := range agents {
			scopes = append(scopes, jobListScope(ws, true, a, k, sel.Status))
		}
	}
	return scopes
}
