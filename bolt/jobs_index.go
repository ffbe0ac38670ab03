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
// (keys "<scope>\x00<job id>"), so that a page reads only the jobs it shows whatever its
// filters (docs/jobs.md, "What a page costs"). The kind is part of every scope because a
// caller reads only the kinds of its modules: a list merges the scopes of the kinds it
// may read, so a kind it may not read costs it nothing.
//
//	"<ws>/k/<kind>"                          every job of the kind
//	"<ws>/k/<kind>/p"                        those pending (queued or running)
//	"<ws>/k/<kind>/s/<status>"               those in a final status
//	"<ws>/a/<agent>/k/<kind>"                those working for the agent ("" for none)
//	"<ws>/a/<agent>/k/<kind>/p"              and pending
//	"<ws>/a/<agent>/k/<kind>/s/<status>"     and in a final status
//
// An entry of a pending scope holds the job's status in its value (dueQueued or
// dueRunning); every other value is empty. A claim so rewrites two values in place
// rather than moving two entries to other scopes (schema 9; schema 8 gave queued and
// running a scope each), and a list of queued or running jobs walks the pending scopes and
// passes over the entries of the other status by their value. A job's status entries
// move in the transaction that changes its status (writeJob).
var bucketJobsListed = []byte("jobs_listed")

func init() { allBuckets = append(allBuckets, bucketJobsListed) }

// jobListScope is the scope of ws's jobs of kind, of agent when forAgent ("" for the
// jobs of none), of status when not "" (the pending scope for queued and running).
func jobListScope(ws string, forAgent bool, agent, kind, status string) string {
	s := ws
	if forAgent {
		s += "/a/" + agent
	}
	s += "/k/" + kind
	switch status {
	case "":
	case data.JobQueued, data.JobRunning:
		s += "/p"
	default:
		s += "/s/" + status
	}
	return s
}

// jobListValue is the value of a job's entry in its status scope: the status byte in a
// pending scope, nil in a final status's ("" too: the scopes of every status).
func jobListValue(status string) []byte {
	switch status {
	case data.JobQueued:
		return []byte{dueQueued}
	case data.JobRunning:
		return []byte{dueRunning}
	}
	return nil
}

// jobListing is one of a job's list entries: its scope and value.
type jobListing struct {
	scope string
	value []byte
}

// jobListScopes returns the entries j is listed under; none for nil.
func jobListScopes(j *data.JobRecord) []jobListing {
	if j == nil {
		return nil
	}
	agent := jobAgent(j)
	status := jobListValue(j.Status)
	return []jobListing{
		{jobListScope(j.WorkspaceID, false, "", j.Kind, ""), nil},
		{jobListScope(j.WorkspaceID, false, "", j.Kind, j.Status), status},
		{jobListScope(j.WorkspaceID, true, agent, j.Kind, ""), nil},
		{jobListScope(j.WorkspaceID, true, agent, j.Kind, j.Status), status},
	}
}

// listingIn returns the entry of list in scope, false when there is none.
func listingIn(list []jobListing, scope string) (jobListing, bool) {
	for _, l := range list {
		if l.scope == scope {
			return l, true
		}
	}
	return jobListing{}, false
}

func jobAgent(j *data.JobRecord) string {
	if j.AgentID == nil {
		return ""
	}
	return *j.AgentID
}

// moveJobListing moves job id's list entries from old's scopes to next's (either nil: a
// new or a deleted job): only those that differ, a status's when the status changes, in
// place when only the value does (queued ↔ running).
func moveJobListing(tx *bbolt.Tx, id string, old, next *data.JobRecord) error {
	b := tx.Bucket(bucketJobsListed)
	b.FillPercent = appendFill // ids are time-ordered: a scope grows at its end
	was, is := jobListScopes(old), jobListScopes(next)
	for _, l := range was {
		if _, kept := listingIn(is, l.scope); !kept {
			if err := indexDelete(b, l.scope, id); err != nil {
				return err
			}
		}
	}
	for _, l := range is {
		if before, ok := listingIn(was, l.scope); !ok || !bytes.Equal(before.value, l.value) {
			if err := b.Put(indexKey(l.scope, id), l.value); err != nil {
				return err
			}
		}
	}
	return nil
}

// listJobsOfStore lists every stored job under its scopes: the schema 7 → 8 migration,
// which builds the index from the jobs of a file written before it (in the transaction
// that raises the version, so a crash leaves the old version to build it again), in
// the current format (so the 8 → 9 migration after it finds nothing to move). The
// entries are put in key order: bbolt splits a node only at commit, so a transaction's
// puts in random order each shift a node that holds all the ones before (40,000 jobs
// took 94 s so, docs/performance.md).
func listJobsOfStore(tx *bbolt.Tx) error {
	var entries []indexEntry
	if err := tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
		var j data.JobRecord
		if err := jsonUnmarshal(v, &j); err != nil {
			return fmt.Errorf("job %s: %w", k, err)
		}
		for _, l := range jobListScopes(&j) {
			entries = append(entries, indexEntry{indexKey(l.scope, string(k)), l.value})
		}
		return nil
	}); err != nil {
		return err
	}
	return putSorted(tx.Bucket(bucketJobsListed), entries)
}

// indexEntry is a key and value to put.
type indexEntry struct{ key, value []byte }

// putSorted puts entries in key order, its pages split nearly full (appendFill): a
// migration's bulk of puts. bbolt splits a page only at the commit, so puts in any other
// order shift a page's entries on each insert, a time that grows with the square of the
// entries (schema 22's fill of 100,000 kept answers: 11.8 s, in key order 0.94 s).
func putSorted(b *bbolt.Bucket, entries []indexEntry) error {
	slices.SortFunc(entries, func(a, b indexEntry) int { return bytes.Compare(a.key, b.key) })
	b.FillPercent = appendFill
	for _, e := range entries {
		if err := b.Put(e.key, e.value); err != nil {
			return err
		}
	}
	return nil
}

// mergePendingJobScopes is the schema 8 → 9 migration: each entry of a "queued" or
// "running" status scope moves to its pending scope, the status in its value. Only the
// index's keys are read (no job is decoded), the moved entries put in key order; in the
// transaction that raises the version, so a crash leaves schema 8 to move them again.
func mergePendingJobScopes(tx *bbolt.Tx) error {
	b := tx.Bucket(bucketJobsListed)
	var gone [][]byte
	var moved []indexEntry
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		end := bytes.LastIndexByte(k, 0) // ids hold no NUL; scopes end at the last one
		if end < 0 {
			return fmt.Errorf("job list entry %q names no job", k)
		}
		for _, status := range []string{data.JobQueued, data.JobRunning} {
			if scope, ok := bytes.CutSuffix(k[:end], []byte("/s/"+status)); ok {
				gone = append(gone, slices.Clone(k))
				moved = append(moved, indexEntry{indexKey(string(scope)+"/p", string(k[end+1:])), jobListValue(status)})
			}
		}
	}
	// Deleted after the walk: a bbolt cursor may skip a key after a delete under it.
	for _, k := range gone {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return putSorted(b, moved)
}

// jobListingFault walks the stored jobs and the list index and returns the first way
// they disagree (an entry missing, one left behind, or one whose value names another
// status), nil when the index holds exactly the entries the jobs call for.
// CheckConsistency runs it.
func jobListingFault(tx *bbolt.Tx) error {
	want := map[string][]byte{}
	if err := tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
		var j data.JobRecord
		if err := jsonUnmarshal(v, &j); err != nil {
			return fmt.Errorf("job %s: %w", k, err)
		}
		for _, l := range jobListScopes(&j) {
			want[string(indexKey(l.scope, string(k)))] = l.value
		}
		return nil
	}); err != nil {
		return err
	}
	if err := tx.Bucket(bucketJobsListed).ForEach(func(k, v []byte) error {
		value, ok := want[string(k)]
		if !ok {
			return fmt.Errorf("job list entry %q is left behind: its job is not in that scope", k)
		}
		if !bytes.Equal(v, value) {
			return fmt.Errorf("job list entry %q holds %q, its job's status calls for %q", k, v, value)
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

// jobListPlan returns the scopes of ws whose union is sel's jobs: exactly them, but for
// a caller limited to so many agents that a scope per agent and kind would pass
// data.MaxJobListWalks: its list walks the workspace's scopes instead and checks the
// agent on each job read, passing over the other agents' uncounted (ListJobs).
func jobListPlan(ws string, sel data.JobSelection) []string {
	scopes, _ := jobListWalk(ws, sel)
	return scopes
}

// jobListWalk is jobListPlan, and whether those scopes hold jobs of agents sel does
// not keep (the workspace's scopes, for a caller limited to many agents).
func jobListWalk(ws string, sel data.JobSelection) (scopes []string, otherAgents bool) {
	kinds := []string{}
	for _, k := range sel.Kinds {
		if sel.Kind == "" || k == sel.Kind {
			kinds = append(kinds, k)
		}
	}
	var agents []string // nil: the workspace's scopes
	switch {
	case sel.AgentID != "" && sel.Agents != nil && !slices.Contains(sel.Agents, sel.AgentID):
		return []string{}, false // an agent the caller may not see has no jobs for it
	case sel.AgentID != "":
		agents = []string{sel.AgentID}
	case sel.Agents != nil && (len(sel.Agents)+1)*len(kinds) <= data.MaxJobListWalks:
		agents = append(slices.Clone(sel.Agents), "") // and the jobs working for no agent
	}
	scopes = []string{}
	for _, k := range kinds {
		if agents == nil {
			scopes = append(scopes, jobListScope(ws, false, "", k, sel.Status))
		}
		for _, a := range agents {
			if a == "" && slices.Contains(sel.AgentKinds, k) {
				continue // a job of an agent kind that names no agent is not the caller's (data.JobSelection)
			}
			scopes = append(scopes, jobListScope(ws, true, a, k, sel.Status))
		}
	}
	return scopes, agents == nil && sel.Agents != nil
}
