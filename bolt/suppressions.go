package bolt

import (
	"encoding/binary"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Buckets of the suppression list (service.CampaignTx): the entries, a unique index of
// each workspace's numbers, the workspace's list in creation order, and how many numbers
// each workspace lists (the bound's check reads it instead of counting the list).
var (
	bucketSuppressions        = []byte("suppressions")          // entry id → data.Suppression
	bucketSuppressionsByPhone = []byte("suppressions_by_phone") // "<ws>\x00<E.164>" → entry id
	bucketSuppressionsByWS    = []byte("suppressions_by_ws")    // "<ws>\x00<entry id>" → empty
	bucketSuppressionCounts   = []byte("suppression_counts")    // ws → its entries, uint64 big-endian
)

func init() {
	allBuckets = append(allBuckets, bucketSuppressions, bucketSuppressionsByPhone, bucketSuppressionsByWS, bucketSuppressionCounts)
}

// countSuppressionLists keeps the count of every workspace's list of a file written
// before counts were kept (the schema 6 → 7 migration).
func countSuppressionLists(tx *bbolt.Tx) error {
	byWS, counts := tx.Bucket(bucketSuppressionsByWS), tx.Bucket(bucketSuppressionCounts)
	return tx.Bucket(bucketWorkspaces).ForEach(func(ws, _ []byte) error {
		n := scopeCountUpTo(byWS, string(ws), -1)
		if n == 0 {
			return nil
		}
		return counts.Put(ws, binary.BigEndian.AppendUint64(nil, uint64(n)))
	})
}

// suppressionCount is how many numbers ws lists: the kept count, or, with none kept (no
// number listed, or a list of a workspace the migration did not find), its index counted.
func (t tx) suppressionCount(ws string) int64 {
	if v := t.b.Bucket(bucketSuppressionCounts).Get([]byte(ws)); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return scopeCountUpTo(t.b.Bucket(bucketSuppressionsByWS), ws, -1)
}

func (t tx) putSuppressionCount(ws string, n int64) error {
	return t.b.Bucket(bucketSuppressionCounts).Put([]byte(ws), binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// CountSuppressions implements service.CampaignTx (bbolt has one writer, so the count
// holds for the transaction).
func (t tx) CountSuppressions(ws string) (int, error) { return int(t.suppressionCount(ws)), nil }

// InsertSuppressions implements service.CampaignTx, and moves each workspace's count by
// the numbers it added (counted first, so that a list from before counts were kept is
// counted without them).
func (t tx) InsertSuppressions(list []*data.Suppression) ([]bool, error) {
	counts := map[string]int64{}
	for _, s := range list {
		if _, ok := counts[s.WorkspaceID]; !ok {
			counts[s.WorkspaceID] = t.suppressionCount(s.WorkspaceID)
		}
	}
	phones, entries, byWS := t.b.Bucket(bucketSuppressionsByPhone), t.b.Bucket(bucketSuppressions), t.b.Bucket(bucketSuppressionsByWS)
	out := make([]bool, len(list))
	for i, s := range list {
		key := indexKey(s.WorkspaceID, s.PhoneNumber)
		if phones.Get(key) != nil {
			continue
		}
		if err := phones.Put(key, []byte(s.ID)); err != nil {
			return nil, err
		}
		if err := indexPut(byWS, s.WorkspaceID, s.ID); err != nil {
			return nil, err
		}
		if err := putJSON(entries, []byte(s.ID), s); err != nil {
			return nil, err
		}
		counts[s.WorkspaceID]++
		out[i] = true
	}
	for ws, n := range counts {
		if err := t.putSuppressionCount(ws, n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SuppressionByPhone implements service.CampaignTx.
func (t tx) SuppressionByPhone(ws, phone string) (*data.Suppression, error) {
	id := t.b.Bucket(bucketSuppressionsByPhone).Get(indexKey(ws, phone))
	if id == nil {
		return nil, nil
	}
	return t.Suppression(string(id))
}

// SuppressedAmong implements service.CampaignTx.
func (t tx) SuppressedAmong(ws string, phones []string) (map[string]bool, error) {
	b := t.b.Bucket(bucketSuppressionsByPhone)
	out := map[string]bool{}
	for _, p := range phones {
		if b.Get(indexKey(ws, p)) != nil {
			out[p] = true
		}
	}
	return out, nil
}

// Suppression implements service.CampaignTx.
func (t tx) Suppression(id string) (*data.Suppression, error) {
	var s data.Suppression
	found, err := getJSON(t.b.Bucket(bucketSuppressions), []byte(id), &s)
	if err != nil || !found {
		return nil, err
	}
	return &s, nil
}

// Suppressions implements service.CampaignTx.
func (t tx) Suppressions(ws string, req data.PageRequest) ([]*data.Suppression, data.Page, error) {
	ids, page, err := t.db.page(t.b, bucketSuppressionsByWS, ws, req)
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.Suppression, 0, len(ids))
	for _, id := range ids {
		s, err := t.Suppression(id)
		if err != nil {
			return nil, page, err
		}
		if s != nil {
			list = append(list, s)
		}
	}
	return list, page, nil
}

// DeleteSuppression implements service.CampaignTx, and takes the entry off its
// workspace's count.
func (t tx) DeleteSuppression(s *data.Suppression) error {
	if t.b.Bucket(bucketSuppressions).Get([]byte(s.ID)) == nil {
		return nil
	}
	n := t.suppressionCount(s.WorkspaceID)
	if err := t.b.Bucket(bucketSuppressionsByPhone).Delete(indexKey(s.WorkspaceID, s.PhoneNumber)); err != nil {
		return err
	}
	if err := indexDelete(t.b.Bucket(bucketSuppressionsByWS), s.WorkspaceID, s.ID); err != nil {
		return err
	}
	if err := t.b.Bucket(bucketSuppressions).Delete([]byte(s.ID)); err != nil {
		return err
	}
	return t.putSuppressionCount(s.WorkspaceID, n-1)
}

// deleteWorkspaceSuppressions removes a deleted workspace's list.
func deleteWorkspaceSuppressions(tx *bbolt.Tx, ws string) error {
	entries := tx.Bucket(bucketSuppressions)
	for _, id := range scopeIDs(tx.Bucket(bucketSuppressionsByWS), ws) {
		if err := entries.Delete([]byte(id)); err != nil {
			return err
		}
	}
	for _, b := range [][]byte{bucketSuppressionsByWS, bucketSuppressionsByPhone} {
		if err := deleteScopePrefix(tx.Bucket(b), ws); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketSuppressionCounts).Delete([]byte(ws))
}
