package bolt

import (
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// bucketRecipientsByState lists a campaign's recipients by stored state:
// "<campaign>\x00<state>\x00<recipient id>" → empty. A recipient list filtered on a
// state walks its state's scope (or the few merged, service.StateSelection), so a page
// reads O(per_page) keys at any campaign size (50,000 recipients: docs/performance.md).
// putRecipient moves the entry in the transaction that changes the state.
var bucketRecipientsByState = []byte("recipients_by_state")

func init() {
	allBuckets = append(allBuckets, bucketRecipientsByState)
}

// recipientStateScope is the scope of a campaign's recipients in state.
func recipientStateScope(campaignID, state string) string { return campaignID + "\x00" + state }

// putRecipientState moves r's entry from old's state (old nil: a new recipient).
func putRecipientState(tx *bbolt.Tx, old, r *data.Recipient) error {
	b := tx.Bucket(bucketRecipientsByState)
	if old != nil {
		if old.State == r.State {
			return nil
		}
		if err := indexDelete(b, recipientStateScope(old.CampaignID, old.State), old.ID); err != nil {
			return err
		}
	}
	return indexPut(b, recipientStateScope(r.CampaignID, r.State), r.ID)
}

// dropRecipientState removes r's entry (its delete).
func dropRecipientState(tx *bbolt.Tx, r *data.Recipient) error {
	return indexDelete(tx.Bucket(bucketRecipientsByState), recipientStateScope(r.CampaignID, r.State), r.ID)
}

// Recipients implements service.CampaignTx: the whole campaign from its index, or the
// selected states' scopes merged by id.
func (t tx) Recipients(campaignID string, sel service.StateSelection, req data.PageRequest) ([]*data.Recipient, data.Page, error) {
	spec := listSpec{index: bucketRecipientsByC, scope: campaignID}
	if sel.Filter != "" {
		spec = listSpec{index: bucketRecipientsByState, scope: campaignID, filter: "state=" + sel.Filter, scopes: []string{}}
		for _, s := range sel.States {
			spec.scopes = append(spec.scopes, recipientStateScope(campaignID, s))
		}
	}
	ids, page, err := t.db.list(t.b, spec, req)
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.Recipient, 0, len(ids))
	for _, id := range ids {
		r, err := readRecipient(t.b, id)
		if err != nil {
			return nil, page, err
		}
		if r != nil {
			list = append(list, r)
		}
	}
	return list, page, nil
}

// indexRecipientStates fills bucketRecipientsByState from the stored recipients (the
// schema 22 → 23 migration), at open, in one transaction: it reads the two members it
// needs of each recipient and writes the entries in key order (putSorted). A recipient
// that does not decode is passed over, as no list could show it either.
func indexRecipientStates(tx *bbolt.Tx) error {
	var entries []indexEntry
	if err := tx.Bucket(bucketRecipients).ForEach(func(k, v []byte) error {
		var r struct {
			CampaignID string `json:"campaign_id"`
			State      string `json:"state"`
		}
		if jsonUnmarshal(v, &r) == nil && r.CampaignID != "" && !strings.Contains(r.State, "\x00") {
			entries = append(entries, indexEntry{key: indexKey(recipientStateScope(r.CampaignID, r.State), string(k))})
		}
		return nil
	}); err != nil {
		return err
	}
	return putSorted(tx.Bucket(bucketRecipientsByState), entries)
}
