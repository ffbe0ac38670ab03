package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// campaignBench is an owner's context on the engine the tests run on, as production runs
// it (bbolt with fsync), with a published agent and a number.
type campaignBench struct {
	ctx           context.Context
	svc           *service.Services
	store         service.Store
	agent, number string
}

func newCampaignBench(b *testing.B) *campaignBench {
	var store service.Store
	if testkit.OnPostgres() {
		store = testkit.OpenEngine(b)
	} else {
		store = testkit.OpenDB(b, func(o *bolt.Options) { o.NoSync = false })
	}
	svc := testkit.Services(b, store, nil)
	u, err := svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "Bench", Email: "bench@example.com", Password: "password-bench"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := testkit.As(u)
	a, err := svc.Agents.CreateAgent(ctx, data.AgentCreate{Name: data.Some("Dialer")})
	if err != nil {
		b.Fatal(err)
	}
	if err := svc.Agents.PublishAgent(ctx, a.ID, data.PublishRequest{}); err != nil {
		b.Fatal(err)
	}
	n, err := svc.Numbers.CreateNumber(ctx, data.NumberCreate{PhoneNumber: "+14155550123", Provider: "sip"})
	if err != nil {
		b.Fatal(err)
	}
	return &campaignBench{ctx: ctx, svc: svc, store: store, agent: a.ID, number: n.ID}
}

// create stores a campaign of n recipients, open every day, at most max_concurrent 1,000.
func (cb *campaignBench) create(b *testing.B, n, offset int) *data.Campaign {
	rows := make([]data.RecipientInput, n)
	for i := range rows {
		rows[i] = data.RecipientInput{PhoneNumber: fmt.Sprintf("+1415%07d", offset+i), Variables: map[string]any{"customer_name": "Ada"}}
	}
	mc := 1000
	c, err := cb.svc.Campaigns.CreateCampaign(cb.ctx, data.CampaignCreate{Name: "Bench", AgentID: cb.agent, NumberID: cb.number,
		Window:        &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"},
		MaxConcurrent: &mc, Recipients: rows})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkCampaignImport100k creates a campaign of 100,000 recipients (normalized,
// merged, checked against the suppression list, stored in one transaction).
func BenchmarkCampaignImport100k(b *testing.B) {
	if now := time.Now().UTC(); now.Hour() == 23 && now.Minute() == 59 {
		b.Skip("the window is closed in the last minute of a UTC day")
	}
	cb := newCampaignBench(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cb.create(b, 100_000, 2_000_000+i*100_000)
	}
	b.ReportMetric(float64(b.N*100_000)/b.Elapsed().Seconds(), "recipients/s")
}

// BenchmarkDialClaim claims 100 tasks a claim from a campaign of 100,000 recipients and
// reports each call's end (answered), as a runtime does; tasks/s counts claims only.
func BenchmarkDialClaim(b *testing.B) {
	cb := newCampaignBench(b)
	cb.create(b, 100_000, 2_000_000)
	cb.claimEach(b)
}

// BenchmarkDialClaimAcrossOpenCampaigns is BenchmarkDialClaim with the workspace at its
// bound of open campaigns (validate.MaxOpenCampaigns), each of its own published agent
// and 1,000 recipients: a claim reads every running campaign and its agent (whether it
// must pause itself) before it leases, so this is a claim's cost at its widest.
func BenchmarkDialClaimAcrossOpenCampaigns(b *testing.B) {
	cb := newCampaignBench(b)
	for i := range validate.MaxOpenCampaigns {
		a, err := cb.svc.Agents.CreateAgent(cb.ctx, data.AgentCreate{Name: data.Some(fmt.Sprint("Dialer ", i))})
		if err != nil {
			b.Fatal(err)
		}
		if err := cb.svc.Agents.PublishAgent(cb.ctx, a.ID, data.PublishRequest{}); err != nil {
			b.Fatal(err)
		}
		cb.agent = a.ID
		cb.create(b, 1_000, 3_000_000+i*1_000)
	}
	cb.claimEach(b)
}

// claimEach claims 100 tasks b.N times, timing the claims alone (each task's call is
// ended between them, untimed, so its concurrency slot frees), and reports tasks/s and
// ms/claim.
func (cb *campaignBench) claimEach(b *testing.B) {
	var claiming time.Duration
	tasks := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		a, err := cb.svc.Campaigns.ClaimDialTasks(cb.ctx, data.DialClaim{Max: 100})
		claiming += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if len(a.Tasks) == 0 {
			b.Fatalf("no task left after %d", tasks)
		}
		tasks += len(a.Tasks)
		b.StopTimer()
		for _, t := range a.Tasks {
			if _, err := cb.svc.Calls.UpdateCall(cb.ctx, t.Call.ID, data.CallUpdate{Status: data.Some(data.CallEnded), DisconnectionReason: data.Some("user_hangup")}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(tasks)/claiming.Seconds(), "tasks/s")
	b.ReportMetric(claiming.Seconds()*1000/float64(b.N), "ms/claim")
}

// BenchmarkCampaignDelete100k deletes a canceled campaign of 100,000 recipients: "one
// transaction" deletes the record and every recipient in one write (what a writer
// waiting for the database would wait for, were the delete done so); "request" is
// DeleteCampaign as it runs, the record and the first service.CampaignDeleteBatch
// recipients, the rest left to its job. Opening the database and creating and canceling
// each campaign are untimed: the timer runs from the start of the function, and opening
// a PostgreSQL database (its migrations) costs some 300 ms, which timed and divided by
// -benchtime's few iterations was read as the delete's (docs/performance.md).
func BenchmarkCampaignDelete100k(b *testing.B) {
	for _, mode := range []string{"one transaction", "request"} {
		b.Run(mode, func(b *testing.B) {
			b.StopTimer()
			cb := newCampaignBench(b)
			for i := 0; i < b.N; i++ {
				c := cb.create(b, 100_000, 2_000_000+i*100_000)
				if _, err := cb.svc.Campaigns.CancelCampaign(cb.ctx, c.ID); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				var err error
				if mode == "request" {
					err = cb.svc.Campaigns.DeleteCampaign(cb.ctx, c.ID)
				} else {
					err = cb.store.Update(cb.ctx, func(tx service.Tx) error {
						c, err := tx.Campaign(c.ID)
						if err != nil {
							return err
						}
						if err := tx.DeleteCampaign(c); err != nil {
							return err
						}
						_, err = tx.DeleteCampaignRecipients(c.ID, 100_000)
						return err
					})
				}
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
