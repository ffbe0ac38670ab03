package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchRecipientsByState reads the first page (15) of a 50,000-recipient campaign's
// recipients filtered on a state, as a campaign mid-way holds them: dialed in import
// order, so its 2,000 completed and 500 exhausted recipients are its oldest, 100 are in
// progress and the 47,400 newest pending. A filter on exhausted starts past 47,500
// newer recipients of other states; merged is a canceled campaign's canceled (its
// stored canceled, here none, and pending, merged); all is the unfiltered page. A store
// with a Settle method (PostgreSQL's: ANALYZE, as autovacuum would) is settled once they
// are stored.
func BenchRecipientsByState(b *testing.B, open Opener) {
	s := open(b)
	g := stepIDs()
	c := &data.Campaign{ID: g.New(data.PrefixCampaign), WorkspaceID: "ws_1", Name: "C", AgentID: "agt_1", Status: data.CampaignRunning}
	const n = 50_000
	rs := make([]*data.Recipient, 0, n)
	for i := range n {
		state := data.RecipientPending
		switch {
		case i < 2000:
			state = data.RecipientCompleted
		case i < 2500:
			state = data.RecipientExhausted
		case i < 2600:
			state = data.RecipientInProgress
		}
		rs = append(rs, &data.Recipient{ID: g.New(data.PrefixRecipient), CampaignID: c.ID, WorkspaceID: c.WorkspaceID,
			PhoneNumber: fmt.Sprintf("+1415%07d", i), State: state, Variables: map[string]any{"customer_name": "Ada"},
			Attempts: []data.RecipientAttempt{}, CreatedAt: data.NewTime(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))})
	}
	c.Counts.Total = n
	update(b, s, func(tx service.Tx) error { return tx.InsertCampaign(c, rs) })
	if settle, ok := s.(interface{ Settle(testing.TB) }); ok {
		settle.Settle(b)
	}
	for _, sub := range []struct {
		name string
		sel  service.StateSelection
	}{
		{"exhausted", service.StateSelection{Filter: data.RecipientExhausted, States: []string{data.RecipientExhausted}}},
		{"completed", service.StateSelection{Filter: data.RecipientCompleted, States: []string{data.RecipientCompleted}}},
		{"pending", service.StateSelection{Filter: data.RecipientPending, States: []string{data.RecipientPending}}},
		{"merged", service.StateSelection{Filter: data.RecipientCanceled, States: []string{data.RecipientCanceled, data.RecipientPending}}},
		{"all", service.StateSelection{}},
	} {
		b.Run(sub.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				view(b, s, func(tx service.Tx) error {
					page, meta, err := tx.Recipients(c.ID, sub.sel, data.PageRequest{PerPage: 15})
					if err != nil || len(page) != 15 || meta.NextCursor == nil {
						b.Fatalf("a filtered page: %d, next %v, %v", len(page), meta.NextCursor, err)
					}
					return nil
				})
			}
		})
	}
}
