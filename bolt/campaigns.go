package bolt

import (
	"bytes"
	"encoding/binary"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Buckets of campaigns and their recipients (service.CampaignTx, docs/campaigns.md). A
// claim walks a campaign's due and lease indexes from their start, so it reads only the
// recipients it hands out or returns, whatever the campaign's size.
var (
	bucketCampaigns       = []byte("campaigns")       // campaign id → storedCampaign
	bucketCampaignsByWS   = []byte("campaigns_by_ws") // "<ws>\x00<campaign id>" → empty
	bucketCampaignsOpen   = []byte("campaigns_open")  // "<ws>\x00<campaign id>" → empty, while campaignOpen
	bucketRecipients      = []byte("recipients")      // recipient id → data.Recipient
	bucketRecipientsByC   = []byte("recipients_by_campaign")
	bucketRecipientsDue   = []byte("recipients_due")     // "<campaign>\x00" + next_at ms + id, pending only
	bucketRecipientsLease = []byte("recipients_lease")   // "<campaign>\x00" + lease_until ms + id, in progress only
	bucketRecipientsCall  = []byte("recipients_by_call") // call id → recipient id, in progress only
	// ws → the recipients its campaigns keep (data.Campaign.KeptWeight), uint64 big-endian
	bucketCampaignsKept = []byte("campaigns_kept")
	// campaign id → "<ws>\x00<agent id>" (before schema 18 "<ws>" alone), for a deleted
	// campaign whose recipients are not all deleted yet: a workspace's delete finds them
	// here (no other index of it is left), and so does the check that re-queues their job
	bucketCampaignsDeleting = []byte("campaigns_deleting")
)

func init() {
	allBuckets = append(allBuckets, bucketCampaigns, bucketCampaignsByWS, bucketCampaignsOpen, bucketRecipients,
		bucketRecipientsByC, bucketRecipientsDue, bucketRecipientsLease, bucketRecipientsCall, bucketCampaignsKept,
		bucketCampaignsDeleting)
	workspaceCascades = append(workspaceCascades, func(_ *DB, tx *bbolt.Tx, ws string) error {
		return deleteWorkspaceCampaigns(tx, ws)
	})
}

// storedCampaign is a campaign with what only storage keeps.
type storedCampaign struct {
	*data.Campaign
	LastClaimAt *data.Time `json:"last_claim_at"`
}

// timeKey is "<scope>\x00" + t in Unix ms (8 bytes, big-endian) + id: a scope's entries
// sort by time.
func timeKey(scope string, t time.Time, id string) []byte {
	k := make([]byte, 0, len(scope)+9+len(id))
	k = append(k, scope...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(max(t.UnixMilli(), 0)))
	return append(k, id...)
}

// timeKeyParts splits a timeKey of scope's prefix into its time and id.
func timeKeyParts(prefix, k []byte) (time.Time, string) {
	rest := k[len(prefix):]
	return time.UnixMilli(int64(binary.BigEndian.Uint64(rest[:8]))).UTC(), string(rest[8:])
}

// InsertCampaign implements service.CampaignTx.
func (t tx) InsertCampaign(c *data.Campaign, recipients []*data.Recipient) error {
	if err := indexPut(t.b.Bucket(bucketCampaignsByWS), c.WorkspaceID, c.ID); err != nil {
		return err
	}
	if err := putKept(t.b, c.WorkspaceID, keptCount(t.b, c.WorkspaceID)+c.KeptWeight()); err != nil {
		return err
	}
	if err := t.PutCampaign(c); err != nil {
		return err
	}
	byC := t.b.Bucket(bucketRecipientsByC)
	for _, r := range recipients {
		if err := indexPut(byC, c.ID, r.ID); err != nil {
			return err
		}
		if err := putRecipient(t.b, nil, r); err != nil {
			return err
		}
	}
	return nil
}

// Campaign implements service.CampaignTx.
func (t tx) Campaign(id string) (*data.Campaign, error) { return readCampaign(t.b, id) }

func readCampaign(tx *bbolt.Tx, id string) (*data.Campaign, error) {
	s := storedCampaign{Campaign: &data.Campaign{}}
	found, err := getJSON(tx.Bucket(bucketCampaigns), []byte(id), &s)
	if err != nil || !found {
		return nil, err
	}
	s.Campaign.LastClaimAt = s.LastClaimAt
	return s.Campaign, nil
}

// campaignOpen tells whether c belongs in the open index: not final, or final with
// recipients still in progress (a claim returns their leases when they run out).
func campaignOpen(c *data.Campaign) bool {
	return !data.CampaignFinal(c.Status) || c.Counts.InProgress > 0
}

// PutCampaign implements service.CampaignTx.
func (t tx) PutCampaign(c *data.Campaign) error {
	open := t.b.Bucket(bucketCampaignsOpen)
	var err error
	if campaignOpen(c) {
		err = indexPut(open, c.WorkspaceID, c.ID)
	} else {
		err = indexDelete(open, c.WorkspaceID, c.ID)
	}
	if err != nil {
		return err
	}
	if err := listCampaign(t.b, c); err != nil {
		return err
	}
	return putJSON(t.b.Bucket(bucketCampaigns), []byte(c.ID), storedCampaign{Campaign: c, LastClaimAt: c.LastClaimAt})
}

// OpenCampaigns implements service.CampaignTx.
func (t tx) OpenCampaigns(ws string) ([]*data.Campaign, error) {
	var out []*data.Campaign
	for _, id := range scopeIDs(t.b.Bucket(bucketCampaignsOpen), ws) {
		c, err := readCampaign(t.b, id)
		if err != nil {
			return nil, err
		}
		if c != nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// AgentCampaigns implements service.CampaignTx.
func (t tx) AgentCampaigns(ws, agentID string) ([]string, error) {
	open, err := t.OpenCampaigns(ws)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range open {
		if c.AgentID == agentID {
			ids = append(ids, c.ID)
		}
	}
	return ids, nil
}

// Recipient implements service.CampaignTx.
func (t tx) Recipient(id string) (*data.Recipient, error) { return readRecipient(t.b, id) }

func readRecipient(tx *bbolt.Tx, id string) (*data.Recipient, error) {
	var r data.Recipient
	found, err := getJSON(tx.Bucket(bucketRecipients), []byte(id), &r)
	if err != nil || !found {
		return nil, err
	}
	return &r, nil
}

// PutRecipient implements service.CampaignTx.
func (t tx) PutRecipient(old, r *data.Recipient) error { return putRecipient(t.b, old, r) }

// putRecipient stores r and moves its due, lease, call and state entries from old's
// (nil for a new recipient).
func putRecipient(tx *bbolt.Tx, old, r *data.Recipient) error {
	due, lease, calls := tx.Bucket(bucketRecipientsDue), tx.Bucket(bucketRecipientsLease), tx.Bucket(bucketRecipientsCall)
	if old != nil {
		if err := dropRecipientEntries(due, lease, calls, old); err != nil {
			return err
		}
	}
	if r.State == data.RecipientPending && r.NextAt != nil {
		if err := due.Put(timeKey(r.CampaignID, r.NextAt.Time, r.ID), nil); err != nil {
			return err
		}
	}
	if r.State == data.RecipientInProgress {
		if r.LeaseUntil != nil {
			if err := lease.Put(timeKey(r.CampaignID, r.LeaseUntil.Time, r.ID), nil); err != nil {
				return err
			}
		}
		if r.CallID != nil {
			if err := calls.Put([]byte(*r.CallID), []byte(r.ID)); err != nil {
				return err
			}
		}
	}
	if err := putRecipientState(tx, old, r); err != nil {
		return err
	}
	return putJSON(tx.Bucket(bucketRecipients), []byte(r.ID), r)
}

// dropRecipientEntries removes r's entries from the due, lease and call indexes.
func dropRecipientEntries(due, lease, calls *bbolt.Bucket, r *data.Recipient) error {
	if r.NextAt != nil {
		if err := due.Delete(timeKey(r.CampaignID, r.NextAt.Time, r.ID)); err != nil {
			return err
		}
	}
	if r.LeaseUntil != nil {
		if err := lease.Delete(timeKey(r.CampaignID, r.LeaseUntil.Time, r.ID)); err != nil {
			return err
		}
	}
	if r.CallID != nil {
		return calls.Delete([]byte(*r.CallID))
	}
	return nil
}

// DueRecipients implements service.CampaignTx.
func (t tx) DueRecipients(campaignID string, now time.Time, limit int) ([]*data.Recipient, error) {
	return t.timeIndexed(bucketRecipientsDue, campaignID, now, true, limit)
}

// ExpiredLeases implements service.CampaignTx.
func (t tx) ExpiredLeases(campaignID string, now time.Time, limit int) ([]*data.Recipient, error) {
	return t.timeIndexed(bucketRecipientsLease, campaignID, now, false, limit)
}

// timeIndexed reads up to limit recipients of the campaign from a time index, earliest
// first, whose time is before now (or at it, when atToo).
func (t tx) timeIndexed(index []byte, campaignID string, now time.Time, atToo bool, limit int) ([]*data.Recipient, error) {
	prefix := indexKey(campaignID, "")
	var ids []string
	c := t.b.Bucket(index).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(ids) < limit; k, _ = c.Next() {
		at, id := timeKeyParts(prefix, k)
		if at.After(now) || (!atToo && at.Equal(now)) {
			break
		}
		ids = append(ids, id)
	}
	out := make([]*data.Recipient, 0, len(ids))
	for _, id := range ids {
		r, err := readRecipient(t.b, id)
		if err != nil {
			return nil, err
		}
		if r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// NextDue implements service.CampaignTx.
func (t tx) NextDue(campaignID string) (time.Time, error) {
	prefix := indexKey(campaignID, "")
	k, _ := t.b.Bucket(bucketRecipientsDue).Cursor().Seek(prefix)
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return time.Time{}, nil
	}
	at, _ := timeKeyParts(prefix, k)
	return at, nil
}

// RecipientByCall implements service.CampaignTx.
func (t tx) RecipientByCall(callID string) (*data.Recipient, error) {
	id := t.b.Bucket(bucketRecipientsCall).Get([]byte(callID))
	if id == nil {
		return nil, nil
	}
	return readRecipient(t.b, string(id))
}

// DeleteCampaign implements service.CampaignTx.
func (t tx) DeleteCampaign(c *data.Campaign) error {
	for _, b := range [][]byte{bucketCampaignsByWS, bucketCampaignsOpen} {
		if err := indexDelete(t.b.Bucket(b), c.WorkspaceID, c.ID); err != nil {
			return err
		}
	}
	if err := unlistCampaign(t.b, c); err != nil {
		return err
	}
	if err := putKept(t.b, c.WorkspaceID, max(keptCount(t.b, c.WorkspaceID)-c.KeptWeight(), 0)); err != nil {
		return err
	}
	if err := t.b.Bucket(bucketCampaignsDeleting).Put([]byte(c.ID), []byte(c.WorkspaceID+"\x00"+c.AgentID)); err != nil {
		return err
	}
	return t.b.Bucket(bucketCampaigns).Delete([]byte(c.ID))
}

// DeleteCampaignRecipients implements service.CampaignTx.
func (t tx) DeleteCampaignRecipients(campaignID string, limit int) (int, error) {
	n, err := deleteRecipientsOf(t.b, campaignID, limit)
	if err != nil || n == limit {
		return n, err
	}
	return n, t.b.Bucket(bucketCampaignsDeleting).Delete([]byte(campaignID)) // none left
}

// DeletingCampaigns implements service.CampaignTx from campaigns_deleting.
func (t tx) DeletingCampaigns(after string, limit int) ([]service.DeletingCampaign, error) {
	var out []service.DeletingCampaign
	cur := t.b.Bucket(bucketCampaignsDeleting).Cursor()
	k, v := cur.Seek([]byte(after))
	if k != nil && string(k) == after {
		k, v = cur.Next()
	}
	for ; k != nil && len(out) < limit; k, v = cur.Next() {
		ws, agent := deletingOwner(v)
		out = append(out, service.DeletingCampaign{ID: string(k), WorkspaceID: ws, AgentID: agent})
	}
	return out, nil
}

// deletingOwner splits a campaigns_deleting value into its workspace and agent ("" in a
// value written before schema 18).
func deletingOwner(v []byte) (ws, agent string) {
	w, a, _ := bytes.Cut(v, []byte{0})
	return string(w), string(a)
}

// listOrphanedRecipients lists in campaigns_deleting each campaign that has recipients
// but no record: deleted before the list was kept, its delete job may have given up
// (the schema 17 → 18 migration). It walks the recipients index one campaign a seek. The
// campaign's agent is its earlier delete job's, while that job is kept (deleteJobAgents),
// and so is that of each entry a schema 17 binary listed (its workspace alone), as
// PostgreSQL's migration 0029 gives every campaign it lists.
func listOrphanedRecipients(tx *bbolt.Tx) error {
	campaigns, deleting := tx.Bucket(bucketCampaigns), tx.Bucket(bucketCampaignsDeleting)
	var agents map[string]string // read once, only when a campaign needs its agent
	list := func(id []byte, ws string) error {
		if agents == nil {
			var err error
			if agents, err = deleteJobAgents(tx); err != nil {
				return err
			}
		}
		return deleting.Put(id, []byte(ws+"\x00"+agents[ws+"\x00"+string(id)]))
	}
	older := map[string]string{} // entries without an agent: id → workspace
	if err := deleting.ForEach(func(id, v []byte) error {
		if bytes.IndexByte(v, 0) < 0 {
			older[string(id)] = string(v)
		}
		return nil
	}); err != nil {
		return err
	}
	for id, ws := range older {
		if err := list([]byte(id), ws); err != nil {
			return err
		}
	}
	cur := tx.Bucket(bucketRecipientsByC).Cursor()
	for k, _ := cur.First(); k != nil; {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			k, _ = cur.Next()
			continue
		}
		id := append([]byte(nil), k[:i]...)
		if campaigns.Get(id) == nil && deleting.Get(id) == nil {
			r, err := readRecipient(tx, string(k[i+1:]))
			if err != nil {
				return err
			}
			if r != nil {
				if err := list(id, r.WorkspaceID); err != nil {
					return err
				}
			}
		}
		k, _ = cur.Seek(append(id, 1)) // past "<id>\x00…": the next campaign
	}
	return nil
}

// deleteJobAgents maps "<ws>\x00<campaign id>" to the agent of a campaign.delete_recipients
// job of that campaign (its unique key) among the jobs kept (one walk of them: finished
// ones are pruned after --job-retention).
func deleteJobAgents(tx *bbolt.Tx) (map[string]string, error) {
	out := map[string]string{}
	err := tx.Bucket(bucketJobs).ForEach(func(k, _ []byte) error {
		j, err := readJob(tx, string(k))
		if err == nil && j != nil && j.Kind == service.JobKindDeleteCampaignRecipients && j.AgentID != nil {
			out[j.WorkspaceID+"\x00"+j.UniqueKey] = *j.AgentID
		}
		return err
	})
	return out, err
}

// deleteRecipientsOf deletes the campaign's first limit recipients (all when limit < 0)
// with their entries, collected before any is deleted (deleting under a moving cursor
// can skip).
func deleteRecipientsOf(tx *bbolt.Tx, campaignID string, limit int) (int, error) {
	byC := tx.Bucket(bucketRecipientsByC)
	prefix := indexKey(campaignID, "")
	var keys [][]byte
	cur := byC.Cursor()
	for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && (limit < 0 || len(keys) < limit); k, _ = cur.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	due, lease, calls := tx.Bucket(bucketRecipientsDue), tx.Bucket(bucketRecipientsLease), tx.Bucket(bucketRecipientsCall)
	recipients := tx.Bucket(bucketRecipients)
	for _, k := range keys {
		rid := k[len(prefix):]
		r, err := readRecipient(tx, string(rid))
		if err != nil {
			return 0, err
		}
		if r != nil {
			if err := dropRecipientEntries(due, lease, calls, r); err != nil {
				return 0, err
			}
			if err := dropRecipientState(tx, r); err != nil {
				return 0, err
			}
		}
		if err := recipients.Delete(rid); err != nil {
			return 0, err
		}
	}
	return len(keys), deleteKeys(byC, keys)
}

// KeptCampaignRecipients implements service.CampaignTx (bbolt has one writer, so the
// count holds for the transaction).
func (t tx) KeptCampaignRecipients(ws string) (int64, error) { return keptCount(t.b, ws), nil }

// keptCount is what ws's campaigns keep (data.Campaign.KeptWeight summed).
func keptCount(tx *bbolt.Tx, ws string) int64 {
	if v := tx.Bucket(bucketCampaignsKept).Get([]byte(ws)); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

func putKept(tx *bbolt.Tx, ws string, n int64) error {
	return tx.Bucket(bucketCampaignsKept).Put([]byte(ws), binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// countKeptCampaigns fills each workspace's kept count from its campaigns, for a file
// written before counts were kept (the schema 13 → 14 migration).
func countKeptCampaigns(tx *bbolt.Tx) error {
	kept := map[string]int64{}
	if err := tx.Bucket(bucketCampaigns).ForEach(func(_, v []byte) error {
		s := storedCampaign{Campaign: &data.Campaign{}}
		if err := jsonUnmarshal(v, &s); err != nil {
			return err
		}
		kept[s.WorkspaceID] += s.KeptWeight()
		return nil
	}); err != nil {
		return err
	}
	for ws, n := range kept {
		if err := putKept(tx, ws, n); err != nil {
			return err
		}
	}
	return nil
}

// deleteWorkspaceCampaigns removes a deleted workspace's campaigns, recipients (those of
// its deleted campaigns not yet deleted too) and suppression list (a cascade).
func deleteWorkspaceCampaigns(tx *bbolt.Tx, ws string) error {
	ids := scopeIDs(tx.Bucket(bucketCampaignsByWS), ws)
	deleting := tx.Bucket(bucketCampaignsDeleting)
	var gone [][]byte
	if err := deleting.ForEach(func(id, owner []byte) error {
		if w, _ := deletingOwner(owner); w == ws {
			ids = append(ids, string(id))
			gone = append(gone, append([]byte(nil), id...))
		}
		return nil
	}); err != nil {
		return err
	}
	if err := deleteKeys(deleting, gone); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := deleteRecipientsOf(tx, id, -1); err != nil {
			return err
		}
		if err := tx.Bucket(bucketCampaigns).Delete([]byte(id)); err != nil {
			return err
		}
	}
	for _, b := range [][]byte{bucketCampaignsByWS, bucketCampaignsOpen} {
		if err := deleteScopePrefix(tx.Bucket(b), ws); err != nil {
			return err
		}
	}
	if err := unlistWorkspaceCampaigns(tx, ws); err != nil {
		return err
	}
	if err := tx.Bucket(bucketCampaignsKept).Delete([]byte(ws)); err != nil {
		return err
	}
	return deleteWorkspaceSuppressions(tx, ws)
}

// indexDrainingCampaigns puts into the open index the campaigns a file written before
// schema 10 left out of it: final (canceled) with recipients still in progress, whose
// leases no claim would return (the schema 9 → 10 migration).
func indexDrainingCampaigns(tx *bbolt.Tx) error {
	open := tx.Bucket(bucketCampaignsOpen)
	return tx.Bucket(bucketCampaigns).ForEach(func(_, v []byte) error {
		s := storedCampaign{Campaign: &data.Campaign{}}
		if err := jsonUnmarshal(v, &s); err != nil {
			return err
		}
		if !campaignOpen(s.Campaign) {
			return nil
		}
		return indexPut(open, s.WorkspaceID, s.ID) // another bucket than the walk's
	})
}
