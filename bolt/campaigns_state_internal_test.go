package bolt

import (
	"context"
	"slices"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// A schema 22 file listed no recipient by state. Opening it (schema 23) lists each
// stored recipient under its campaign and state, so the state filter lists recipients
// stored before it; deleting a campaign's recipients then leaves no entry behind.
func TestRecipientStatesOfAnOlderFileAreIndexed(t *testing.T) {
	db, dir, opts := openFile(t)
	c := &data.Campaign{ID: "cmp_1", WorkspaceID: "ws_1", AgentID: "agt_1", Status: data.CampaignRunning, Counts: data.CampaignCounts{Total: 4}}
	states := []string{data.RecipientCompleted, data.RecipientPending, data.RecipientExhausted, data.RecipientPending}
	var rs []*data.Recipient
	for i, st := range states {
		rs = append(rs, &data.Recipient{ID: "rcp_" + string(rune('a'+i)), CampaignID: c.ID, WorkspaceID: c.WorkspaceID,
			PhoneNumber: "+1415555010" + string(rune('0'+i)), State: st, Attempts: []data.RecipientAttempt{}})
	}
	ctx := context.Background()
	if err := db.Update(ctx, func(tx service.Tx) error { return tx.InsertCampaign(c, rs) }); err != nil {
		t.Fatal(err)
	}
	// As a schema 22 binary left it: no entry by state.
	if err := db.bolt.Update(func(b *bbolt.Tx) error {
		if err := setSchemaVersion(b, 22); err != nil {
			return err
		}
		if err := b.DeleteBucket(bucketRecipientsByState); err != nil {
			return err
		}
		_, err := b.CreateBucket(bucketRecipientsByState)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := stateIDs(t, db, c.ID, data.RecipientPending); len(got) != 0 {
		t.Fatalf("the schema 22 file's pending: %v, want none listed", got)
	}
	db = reopenUpgraded(t, db, dir, opts)
	defer db.Close()
	for st, want := range map[string][]string{
		data.RecipientPending: {"rcp_d", "rcp_b"}, data.RecipientCompleted: {"rcp_a"}, data.RecipientExhausted: {"rcp_c"},
		data.RecipientInProgress: nil,
	} {
		if got := stateIDs(t, db, c.ID, st); !slices.Equal(got, want) {
			t.Errorf("%s after the upgrade: %v, want %v", st, got, want)
		}
	}
	if err := db.Update(ctx, func(tx service.Tx) error {
		if err := tx.DeleteCampaign(c); err != nil {
			return err
		}
		_, err := tx.DeleteCampaignRecipients(c.ID, 100)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.bolt.View(func(b *bbolt.Tx) error {
		if k, _ := b.Bucket(bucketRecipientsByState).Cursor().First(); k != nil {
			t.Errorf("an entry by state outlived its recipient: %q", k)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func stateIDs(t *testing.T, db *DB, campaignID, state string) []string {
	t.Helper()
	var ids []string
	if err := db.View(context.Background(), func(tx service.Tx) error {
		list, _, err := tx.Recipients(campaignID, service.StateSelection{Filter: state, States: []string{state}}, data.PageRequest{PerPage: 100})
		for _, r := range list {
			ids = append(ids, r.ID)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}
