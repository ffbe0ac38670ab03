package bolt

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkRecipientsStateWalk is what the exhausted page of BenchmarkRecipientsByState
// would cost without recipients_by_state: the campaign's list walked newest first, each
// recipient read for its state, past the 47,500 newer ones of other states (the
// comparison in docs/performance.md, "A campaign's recipients by state").
func BenchmarkRecipientsStateWalk(b *testing.B) {
	db, err := Open(b.TempDir(), Options{NoSync: true, SecretKey: make([]byte, 32)})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	g := data.NewIDGen()
	c := &data.Campaign{ID: g.New(data.PrefixCampaign), WorkspaceID: "ws_1", AgentID: "agt_1", Status: data.CampaignRunning}
	rs := make([]*data.Recipient, 0, 50_000)
	for i := range 50_000 {
		state := data.RecipientPending
		switch {
		case i < 2000:
			state = data.RecipientCompleted
		case i < 2500:
			state = data.RecipientExhausted
		case i < 2600:
			state = data.RecipientInProgress
		}
		rs = append(rs, &data.Recipient{ID: g.New(data.PrefixRecipient), CampaignID: c.ID, WorkspaceID: "ws_1",
			PhoneNumber: fmt.Sprintf("+1415%07d", i), State: state, Variables: map[string]any{"customer_name": "Ada"},
			Attempts: []data.RecipientAttempt{}})
	}
	if err := db.Update(context.Background(), func(tx service.Tx) error { return tx.InsertCampaign(c, rs) }); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := db.View(context.Background(), func(stx service.Tx) error {
			t := stx.(tx)
			ids, _, err := t.db.pageWhere(t.b, bucketRecipientsByC, c.ID, data.PageRequest{PerPage: 15}, func(id string) bool {
				r, err := readRecipient(t.b, id)
				return err == nil && r != nil && r.State == data.RecipientExhausted
			})
			if err == nil && len(ids) != 15 {
				err = fmt.Errorf("%d exhausted, want 15", len(ids))
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}
