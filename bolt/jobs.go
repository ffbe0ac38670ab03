package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Buckets of durable background jobs (service.JobTx), listed in allBuckets.
var (
	bucketJobs       = []byte("jobs")        // job id → JobRecord
	bucketJobsDue    = []byte("jobs_due")    // due ms (8 bytes) + job id → status byte + kind; pending jobs only
	bucketJobsByWS   = []byte("jobs_by_ws")  // "<workspace>\x00<job id>" → empty
	bucketJobsUnique = []byte("jobs_unique") // "<workspace>\x00<kind>\x00<unique key>" → job id, while pending
)

// Status bytes of a due entry, so counts need not decode the rows.
const (
	dueQueued  = 'q'
	dueRunning = 'r'
)

// jobDueEntry is j's key and value in the due index; a nil key when j is final.
func jobDueEntry(j *data.JobRecord) (key, value []byte) {
	at, ok := j.DueAt()
	if !ok {
		return nil, nil
	}
	status := byte(dueQueued)
	if j.Status == data.JobRunning {
		status = dueRunning
	}
	return dueKey(at, j.ID), append([]byte{status}, j.Kind...)
}

func jobUniqueKey(j *data.JobRecord) []byte {
	return []byte(j.WorkspaceID + "\x00" + j.Kind + "\x00" + j.UniqueKey)
}

// readJob decodes job id, nil when absent.
func readJob(tx *bbolt.Tx, id string) (*data.JobRecord, error) {
	var j data.JobRecord
	found, err := getJSON(tx.Bucket(bucketJobs), []byte(id), &j)
	if err != nil || !found {
		return nil, err
	}
	return &j, nil
}

// writeJob stores j, whose stored state was old (nil for a new job), and moves its due
// entry, unique key and list entries with it, in the same transaction: the indexes never
// disagree with the record, a crash included.
func writeJob(tx *bbolt.Tx, old, j *data.JobRecord) error {
	due := tx.Bucket(bucketJobsDue)
	if old != nil {
		if k, _ := jobDueEntry(old); k != nil {
			if err := due.Delete(k); err != nil {
				return err
			}
		}
		if old.UniqueKey != "" && !data.JobFinished(old.Status) && data.JobFinished(j.Status) {
			if err := tx.Bucket(bucketJobsUnique).Delete(jobUniqueKey(old)); err != nil {
				return err
			}
		}
	}
	if err := putJSON(tx.Bucket(bucketJobs), []byte(j.ID), j); err != nil {
		return err
	}
	if err := moveJobListing(tx, j.ID, old, j); err != nil {
		return err
	}
	if k, v := jobDueEntry(j); k != nil {
		return due.Put(k, v)
	}
	return nil
}

// EnqueueJob implements service.JobTx.
func (t tx) EnqueueJob(j *data.JobRecord) (*data.JobRecord, error) {
	if j.UniqueKey != "" && !data.JobFinished(j.Status) {
		unique := t.b.Bucket(bucketJobsUnique)
		if id := unique.Get(jobUniqueKey(j)); id != nil {
			existing, err := readJob(t.b, string(id))
			if err != nil || existing != nil && !data.JobFinished(existing.Status) {
				return existing, err
			}
		}
		if err := unique.Put(jobUniqueKey(j), []byte(j.ID)); err != nil {
			return nil, err
		}
	}
	if err := indexPut(t.b.Bucket(bucketJobsByWS), j.WorkspaceID, j.ID); err != nil {
		return nil, err
	}
	return j, writeJob(t.b, nil, j)
}

// HastenJob implements service.JobTx.
func (t tx) HastenJob(id string, at time.Time) (bool, error) {
	old, err := readJob(t.b, id)
	if err != nil || old == nil {
		return false, err
	}
	j := *old
	switch {
	case old.Status == data.JobQueued && old.RunAt.After(at):
		j.RunAt = data.NewTime(at)
	case old.Status == data.JobRunning && (old.HastenTo == nil || old.HastenTo.After(at)):
		j.HastenTo = data.NewTime(at).Ptr()
	default:
		return false, nil
	}
	return true, writeJob(t.b, old, &j)
}

// ClaimJobs implements service.JobTx: a walk of the due index from its start. bbolt has
// one writer at a time, so the transaction is the whole claim.
func (t tx) ClaimJobs(c data.JobClaim) ([]*data.JobRecord, time.Time, error) {
	nowKey := uint64(max(c.Now.UnixMilli(), 0))
	var ids []string
	var next time.Time
	cur := t.b.Bucket(bucketJobsDue).Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if len(v) == 0 || !slices.Contains(c.Kinds, string(v[1:])) {
			continue
		}
		dueMS := binary.BigEndian.Uint64(k[:8])
		if dueMS > nowKey || len(ids) == c.Limit {
			next = time.UnixMilli(int64(dueMS))
			break
		}
		ids = append(ids, string(k[8:]))
	}
	// Rewritten after the walk: a bbolt cursor may skip a key after a change under it.
	claimed := make([]*data.JobRecord, 0, len(ids))
	for _, id := range ids {
		old, err := readJob(t.b, id)
		if err != nil {
			return nil, time.Time{}, err
		}
		if old == nil {
			return nil, time.Time{}, fmt.Errorf("job %s is due but not stored", id)
		}
		j := *old
		j.Status, j.Attempt, j.LeaseOwner, j.HastenTo = data.JobRunning, old.Attempt+1, c.Owner, nil
		until := data.NewTime(c.LeaseUntil)
		j.LeaseUntil = &until
		if j.StartedAt == nil {
			j.StartedAt = data.NewTime(c.Now).Ptr()
		}
		if err := writeJob(t.b, old, &j); err != nil {
			return nil, time.Time{}, err
		}
		claimed = append(claimed, &j)
	}
	return claimed, next, nil
}

// heldJob returns job id when lease still holds it, else nil.
func (t tx) heldJob(id string, lease data.JobLease) (*data.JobRecord, error) {
	j, err := readJob(t.b, id)
	if err != nil || j == nil || !j.Holds(lease) {
		return nil, err
	}
	return j, nil
}

// ExtendJobLease implements service.JobTx.
func (t tx) ExtendJobLease(id string, lease data.JobLease, until time.Time) (bool, error) {
	old, err := t.heldJob(id, lease)
	if err != nil || old == nil {
		return false, err
	}
	j := *old
	end := data.NewTime(until)
	j.LeaseUntil = &end
	return true, writeJob(t.b, old, &j)
}

// SetJobProgress implements service.JobTx.
func (t tx) SetJobProgress(id string, lease data.JobLease, p data.JobProgress, checkpoint string) (bool, error) {
	old, err := t.heldJob(id, lease)
	if err != nil || old == nil {
		return false, err
	}
	j := *old
	j.Progress, j.Checkpoint = p, checkpoint
	return true, writeJob(t.b, old, &j)
}

// FinishJob implements service.JobTx.
func (t tx) FinishJob(id string, lease data.JobLease, out data.JobOutcome) (bool, error) {
	old, err := t.heldJob(id, lease)
	if err != nil || old == nil {
		return false, err
	}
	return true, writeJob(t.b, old, finished(old, out))
}

// finished is old after out: what both engines store when a run ends.
func finished(old *data.JobRecord, out data.JobOutcome) *data.JobRecord {
	j := *old
	j.Status, j.LeaseOwner, j.LeaseUntil, j.HastenTo = out.Status, "", nil, nil
	if out.Error != "" {
		msg := out.Error
		j.LastError = &msg
	}
	if out.Uncounted {
		j.Attempt--
	}
	if out.Status == data.JobQueued {
		j.RunAt = data.NewTime(old.RetryAt(out.RunAt))
	} else {
		j.FinishedAt = data.NewTime(out.At).Ptr()
	}
	return &j
}

// EndJobLeases implements service.JobTx: a walk of the due index's running entries.
func (t tx) EndJobLeases(now time.Time, alive []string) (int, error) {
	var ids []string
	cur := t.b.Bucket(bucketJobsDue).Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if len(v) > 0 && v[0] == dueRunning {
			ids = append(ids, string(k[8:]))
		}
	}
	// Rewritten after the walk: a bbolt cursor may skip a key after a change under it.
	end := data.NewTime(now)
	n := 0
	for _, id := range ids {
		old, err := readJob(t.b, id)
		if err != nil {
			return n, err
		}
		if old == nil || old.Status != data.JobRunning || slices.Contains(alive, old.LeaseOwner) ||
			old.LeaseUntil == nil || !old.LeaseUntil.After(end.Time) {
			continue
		}
		j := *old
		j.LeaseUntil = &end
		if err := writeJob(t.b, old, &j); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// CancelJob implements service.JobTx.
func (t tx) CancelJob(id string, at time.Time) (bool, error) {
	old, err := readJob(t.b, id)
	if err != nil || old == nil || data.JobFinished(old.Status) {
		return false, err
	}
	j := *old
	j.Status, j.LeaseOwner, j.LeaseUntil, j.FinishedAt = data.JobCanceled, "", nil, data.NewTime(at).Ptr()
	return true, writeJob(t.b, old, &j)
}

// Job implements service.JobTx.
func (t tx) Job(id string) (*data.JobRecord, error) { return readJob(t.b, id) }

// Jobs implements service.JobTx.
func (t tx) Jobs(workspaceID string, req data.PageRequest) ([]*data.JobRecord, data.Page, error) {
	ids, page, err := t.db.page(t.b, bucketJobsByWS, workspaceID, req)
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.JobRecord, 0, len(ids))
	for _, id := range ids {
		j, err := readJob(t.b, id)
		if err != nil {
			return nil, page, err
		}
		if j == nil {
			return nil, page, fmt.Errorf("job %s is listed but not stored", id)
		}
		list = append(list, j)
	}
	return list, page, nil
}

// JobQueueStats implements service.JobTx: a walk of the due index, which holds exactly
// the pending jobs.
func (t tx) JobQueueStats(now time.Time) ([]data.JobQueueStat, error) {
	nowKey := uint64(max(now.UnixMilli(), 0))
	byKind := map[string]*data.JobQueueStat{}
	var kinds []string
	sawDue := map[string]bool{}
	cur := t.b.Bucket(bucketJobsDue).Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if len(v) == 0 {
			continue
		}
		kind := string(v[1:])
		st := byKind[kind]
		if st == nil {
			st = &data.JobQueueStat{Kind: kind}
			byKind[kind] = st
			kinds = append(kinds, kind)
		}
		if v[0] == dueRunning {
			st.Running++
		} else {
			st.Queued++
		}
		// The index is in due order: the first due entry of a kind is its oldest.
		if dueMS := binary.BigEndian.Uint64(k[:8]); dueMS <= nowKey && !sawDue[kind] {
			sawDue[kind] = true
			st.OldestDueAge = time.Duration(nowKey-dueMS) * time.Millisecond
		}
	}
	slices.Sort(kinds)
	out := make([]data.JobQueueStat, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, *byKind[k])
	}
	return out, nil
}

// PruneJobs implements service.JobTx: a walk of the jobs bucket, whose keys are the
// time-ordered ids, from the oldest up to before's first id.
func (t tx) PruneJobs(before time.Time, limit int) (int, error) {
	b := t.b.Bucket(bucketJobs)
	end := []byte(data.IDFloor(data.PrefixJob, before))
	var old []data.JobRecord
	c := b.Cursor()
	for k, v := c.First(); k != nil && bytes.Compare(k, end) < 0 && len(old) < limit; k, v = c.Next() {
		var j data.JobRecord
		if err := jsonUnmarshal(v, &j); err != nil {
			return 0, fmt.Errorf("job %s: %w", k, err)
		}
		if data.JobFinished(j.Status) && j.FinishedAt != nil && j.FinishedAt.Before(before) {
			old = append(old, j)
		}
	}
	// Deleted after the walk: a bbolt cursor may skip a key after a delete under it.
	idx := t.b.Bucket(bucketJobsByWS)
	for _, j := range old {
		if err := b.Delete([]byte(j.ID)); err != nil {
			return 0, err
		}
		if err := indexDelete(idx, j.WorkspaceID, j.ID); err != nil {
			return 0, err
		}
		if err := moveJobListing(t.b, j.ID, &j, nil); err != nil {
			return 0, err
		}
	}
	return len(old), nil
}

// deleteWorkspaceJobs removes every job of a workspace, pending ones from the due index
// and the unique keys, each from its list entries.
func deleteWorkspaceJobs(tx *bbolt.Tx, workspaceID string) error {
	idx := tx.Bucket(bucketJobsByWS)
	for _, id := range scopeIDs(idx, workspaceID) {
		j, err := readJob(tx, id)
		if err != nil {
			return err
		}
		if j != nil {
			if k, _ := jobDueEntry(j); k != nil {
				if err := tx.Bucket(bucketJobsDue).Delete(k); err != nil {
					return err
				}
			}
			if j.UniqueKey != "" && !data.JobFinished(j.Status) {
				if err := tx.Bucket(bucketJobsUnique).Delete(jobUniqueKey(j)); err != nil {
					return err
				}
			}
			if err := moveJobListing(tx, id, j, nil); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketJobs).Delete([]byte(id)); err != nil {
			return err
		}
		if err := indexDelete(idx, workspaceID, id); err != nil {
			return err
		}
	}
	return nil
}
