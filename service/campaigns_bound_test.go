package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// TestOpenCampaignsBound: a workspace has at most validate.MaxOpenCampaigns campaigns not
// yet final (every claim reads each): the create that reaches the bound is taken, the one
// past it refused (409 naming it, nothing stored), another workspace is not held back,
// and a canceled one frees its place, which two creates racing for it do not both take.
func TestOpenCampaignsBound(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	a, b := mustUser(t, svc, "ada@example.com"), mustUser(t, svc, "bob@example.com")
	ctx := testkit.As(a)
	first := campaignOfTwo(t, svc, ctx, 1)
	create := func() (*data.Campaign, error) {
		max := 1
		return svc.Campaigns.CreateCampaign(ctx, data.CampaignCreate{Name: "More", AgentID: first.AgentID, NumberID: first.NumberID,
			Window:        &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"},
			MaxConcurrent: &max, Recipients: []data.RecipientInput{{PhoneNumber: "+14155550100"}}})
	}
	open := 1
	for _, step := range []struct {
		name    string
		open    int // open campaigns before the create
		refused bool
	}{
		{"reaching the bound", validate.MaxOpenCampaigns - 1, false},
		{"past it", validate.MaxOpenCampaigns, true},
	} {
		for ; open < step.open; open++ {
			if _, err := create(); err != nil {
				t.Fatalf("campaign %d: %v", open+1, err)
			}
		}
		_, err := create()
		switch {
		case !step.refused && err != nil:
			t.Fatalf("%s: %v", step.name, err)
		case !step.refused:
			open++
		case data.ErrorCode(err) != data.ECONFLICT || !strings.Contains(data.ErrorMessage(err), fmt.Sprintf("has %d open campaigns", validate.MaxOpenCampaigns)):
			t.Errorf("%s: %v, want %s naming the bound", step.name, err, data.ECONFLICT)
		}
		if n := storedOpenCampaigns(t, engine, a.PersonalWorkspaceID); n != open {
			t.Errorf("%s: %d open campaigns stored, want %d", step.name, n, open)
		}
	}
	// Another workspace's is not held back.
	bctx := testkit.As(b)
	agent, err := svc.Agents.CreateAgent(bctx, data.AgentCreate{Name: data.Some("Dialer")})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Agents.PublishAgent(bctx, agent.ID, data.PublishRequest{}); err != nil {
		t.Fatal(err)
	}
	number, err := svc.Numbers.CreateNumber(bctx, data.NumberCreate{PhoneNumber: "+14155550199", Provider: "sip"})
	if err != nil {
		t.Fatal(err)
	}
	max := 1
	if _, err := svc.Campaigns.CreateCampaign(bctx, data.CampaignCreate{Name: "B", AgentID: agent.ID, NumberID: number.ID,
		Window:        &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"},
		MaxConcurrent: &max, Recipients: []data.RecipientInput{{PhoneNumber: "+14155550100"}}}); err != nil {
		t.Errorf("another workspace's campaign: %v", err)
	}
	// A canceled one frees its place; two creates racing for it store one.
	if _, err := svc.Campaigns.CancelCampaign(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := create(); errs <- err }()
	}
	won := 0
	for range 2 {
		switch err := <-errs; {
		case err == nil:
			won++
		case data.ErrorCode(err) != data.ECONFLICT:
			t.Errorf("the race's loser: %v, want %s", err, data.ECONFLICT)
		}
	}
	if n := storedOpenCampaigns(t, engine, a.PersonalWorkspaceID); won != 1 || n != validate.MaxOpenCampaigns {
		t.Errorf("two creates for the last place: %d won, %d open stored; want 1 and %d", won, n, validate.MaxOpenCampaigns)
	}
}

// storedOpenCampaigns counts workspace ws's campaigns not final, as storage keeps them.
func storedOpenCampaigns(t *testing.T, store service.Store, ws string) int {
	t.Helper()
	n := 0
	err := store.View(context.Background(), func(tx service.Tx) error {
		open, err := tx.OpenCampaigns(ws)
		for _, c := range open {
			if !data.CampaignFinal(c.Status) {
				n++
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKeptCampaignRecipientsBound: a workspace's campaigns keep at most
// validate.MaxKeptCampaignRecipients recipients: the create that reaches the bound is
// taken, the one past it refused (409 naming it, nothing stored); deleting a finished
// campaign frees its room, which two creates racing for the last of it do not both take.
// Finished campaigns of that size are stored directly (their counts, no recipients):
// storage counts a campaign by its counts.
func TestKeptCampaignRecipientsBound(t *testing.T) {
	engine := testkit.OpenEngine(t)
	svc := servicesOn(t, engine, engine, nil)
	ada := mustUser(t, svc, "ada@example.com")
	ctx, ws := testkit.As(ada), ada.PersonalWorkspaceID
	first := campaignOfTwo(t, svc, ctx, 1)
	finished := func(total int64) *data.Campaign {
		at := data.NewTime(time.Now())
		c := &data.Campaign{ID: engine.ServiceOptions().IDs.New(data.PrefixCampaign), WorkspaceID: ws, Name: "Old", AgentID: first.AgentID,
			NumberID: first.NumberID, Status: data.CampaignCompleted, FinishedAt: &at, Counts: data.CampaignCounts{Total: total, Completed: map[string]int64{}}}
		if err := engine.Update(context.Background(), func(tx service.Tx) error { return tx.InsertCampaign(c, nil) }); err != nil {
			t.Fatal(err)
		}
		return c
	}
	create := func(n int) error {
		rows := make([]data.RecipientInput, n)
		for i := range rows {
			rows[i] = data.RecipientInput{PhoneNumber: fmt.Sprintf("+1415555%04d", 200+i)}
		}
		max := 1
		_, err := svc.Campaigns.CreateCampaign(ctx, data.CampaignCreate{Name: "More", AgentID: first.AgentID, NumberID: first.NumberID,
			Window:        &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"},
			MaxConcurrent: &max, Recipients: rows})
		return err
	}
	old := finished(validate.MaxKeptCampaignRecipients - 2 - 3)
	if err := create(3); err != nil {
		t.Fatalf("the create reaching the bound: %v", err)
	}
	if n := storedKept(t, engine, ws); n != validate.MaxKeptCampaignRecipients {
		t.Fatalf("kept %d, want the bound %d", n, validate.MaxKeptCampaignRecipients)
	}
	err := create(1)
	if data.ErrorCode(err) != data.ECONFLICT || !strings.Contains(data.ErrorMessage(err), fmt.Sprintf("at most %d are kept", validate.MaxKeptCampaignRecipients)) {
		t.Errorf("the create past the bound: %v, want %s naming it", err, data.ECONFLICT)
	}
	if n := storedKept(t, engine, ws); n != validate.MaxKeptCampaignRecipients {
		t.Errorf("kept %d after the refused create, want %d", n, validate.MaxKeptCampaignRecipients)
	}
	if n := storedOpenCampaigns(t, engine, ws); n != 2 {
		t.Errorf("%d open campaigns after the refused create, want 2", n)
	}
	// Deleting the finished one frees its room; a campaign fills all but one of it.
	if err := svc.Campaigns.DeleteCampaign(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	finished(validate.MaxKeptCampaignRecipients - 5 - 1)
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- create(1) }()
	}
	won := 0
	for range 2 {
		switch err := <-errs; {
		case err == nil:
			won++
		case data.ErrorCode(err) != data.ECONFLICT:
			t.Errorf("the race's loser: %v, want %s", err, data.ECONFLICT)
		}
	}
	if n := storedKept(t, engine, ws); won != 1 || n != validate.MaxKeptCampaignRecipients {
		t.Errorf("two creates for the last recipient: %d won, %d kept; want 1 and %d", won, n, validate.MaxKeptCampaignRecipients)
	}
}
