package client_test

import (
	"errors"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// campaigns runs a campaign of agent (published) through the client: from a CSV, one
// claim, the call reported, its counts; then pause, resume, cancel, and the
// suppression list.
func (tr *tour) campaigns(agent *data.Agent) {
	c, ctx, check := tr.c, tr.ctx, tr.check
	n, _, err := c.Numbers.Create(ctx, data.NumberCreate{PhoneNumber: "+14155557000", Provider: "sip"})
	check("campaign number", err)
	mc := 2
	settings := data.CampaignCreate{Name: "Tour", AgentID: agent.ID, NumberID: n.ID, MaxConcurrent: &mc,
		Window: &data.CampaignWindow{Days: data.Weekdays, Start: "00:00", End: "23:59"}}
	camp := tr.campaignFromCSV(settings)
	tr.claimAndReport(camp)
	two := tr.pauseResumeCancel(settings, agent, n)
	tr.suppressionList(two)
}

// campaignFromCSV refuses a CSV with a bad line, then creates the campaign from a CSV,
// twice under one key: the second replays the first.
func (tr *tour) campaignFromCSV(settings data.CampaignCreate) *data.Campaign {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	_, _, err := c.Campaigns.CreateFromCSV(ctx, settings, []byte("phone_number\nnot a number\n"))
	if e := mustErr(t, err, 422); e.Fields["recipients.line_2.phone_number"] == nil {
		t.Errorf("a bad CSV line: %+v", e)
	}
	file := []byte("phone_number,customer_name\n+14155557001,Ada\n")
	camp, _, err := c.Campaigns.CreateFromCSV(ctx, settings, file, client.WithIdempotencyKey("csv-1"))
	check("campaign from CSV", err)
	// The same file and key again: the server sees the same body and replays the campaign
	// (a random multipart boundary would make it refuse the key as used for another body).
	again, _, err := c.Campaigns.CreateFromCSV(ctx, settings, file, client.WithIdempotencyKey("csv-1"))
	check("campaign from CSV, repeated", err)
	if again.ID != camp.ID {
		t.Errorf("a repeated CSV create made campaign %s besides %s", again.ID, camp.ID)
	}
	return camp
}

// claimAndReport claims the campaign's one dial task, reports its call ended, and
// checks the campaign's counts and recipients.
func (tr *tour) claimAndReport(camp *data.Campaign) {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	claim, err := c.Campaigns.ClaimDialTasks(ctx, data.DialClaim{Max: 5})
	check("dial claim", err)
	if len(claim.Tasks) != 1 || claim.Tasks[0].ToNumber != "+14155557001" || claim.Tasks[0].Agent == nil || claim.Tasks[0].Call == nil {
		t.Fatalf("claim: %+v", claim)
	}
	_, _, err = c.Calls.Update(ctx, claim.Tasks[0].Call.ID, data.CallUpdate{Status: data.Some(data.CallEnded), DisconnectionReason: data.Some("user_hangup")})
	check("report the call", err)
	got, _, err := c.Campaigns.Get(ctx, camp.ID)
	check("campaign show", err)
	if got.Status != data.CampaignCompleted || got.Counts.Completed[data.OutcomeAnswered] != 1 {
		t.Errorf("campaign after its call: %s %+v", got.Status, got.Counts)
	}
	rs, _, err := c.Campaigns.Recipients(ctx, camp.ID, data.RecipientFilter{}, data.PageRequest{})
	check("recipients", err)
	if len(rs) != 1 || len(rs[0].Attempts) != 1 || rs[0].Attempts[0].CallID == nil {
		t.Errorf("recipients: %+v", rs)
	}
	// The state filter: the completed one, none pending, an unknown state the API's 422.
	done, err := client.Collect(c.Campaigns.AllRecipients(ctx, camp.ID, data.RecipientFilter{State: data.RecipientCompleted}))
	check("completed recipients", err)
	pending, _, err := c.Campaigns.Recipients(ctx, camp.ID, data.RecipientFilter{State: data.RecipientPending}, data.PageRequest{})
	check("pending recipients", err)
	if len(done) != 1 || len(pending) != 0 {
		t.Errorf("completed %d, pending %d; want 1 and 0", len(done), len(pending))
	}
	var apiErr *client.Error
	if _, _, err := c.Campaigns.Recipients(ctx, camp.ID, data.RecipientFilter{State: "failed"}, data.PageRequest{}); !errors.As(err, &apiErr) || apiErr.StatusCode != 422 || apiErr.Fields["state"] == nil {
		t.Errorf("an unknown state: %v, want a 422 naming state", err)
	}
}

// pauseResumeCancel creates a second campaign from JSON, pauses, resumes and cancels it,
// and checks the agent lists both. It returns the canceled campaign.
func (tr *tour) pauseResumeCancel(settings data.CampaignCreate, agent *data.Agent, n *data.Number) *data.Campaign {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	two, _, err := c.Campaigns.Create(ctx, data.CampaignCreate{Name: "Tour 2", AgentID: agent.ID, NumberID: n.ID, MaxConcurrent: settings.MaxConcurrent,
		Window: settings.Window, Recipients: []data.RecipientInput{{PhoneNumber: "+14155557002"}}})
	check("campaign from JSON", err)
	_, _, err = c.Campaigns.Pause(ctx, two.ID)
	check("pause", err)
	_, _, err = c.Campaigns.Resume(ctx, two.ID)
	check("resume", err)
	canceled, _, err := c.Campaigns.Cancel(ctx, two.ID)
	check("cancel", err)
	if canceled.Status != data.CampaignCanceled {
		t.Errorf("canceled: %s", canceled.Status)
	}
	list, _, err := c.Campaigns.List(ctx, data.CampaignFilter{AgentID: agent.ID}, data.PageRequest{})
	check("campaign list", err)
	if len(list) != 2 {
		t.Errorf("campaigns of the agent: %d", len(list))
	}
	return two
}

// suppressionList adds a suppression, imports more, lists them one a page, checks the
// canceled campaign two's recipients, removes the suppression, and deletes two.
func (tr *tour) suppressionList(two *data.Campaign) {
	t, c, ctx, check := tr.t, tr.c, tr.ctx, tr.check
	sup, _, err := c.Campaigns.Suppress(ctx, data.SuppressionCreate{PhoneNumber: "+14155557003"})
	check("suppress", err)
	imp, err := c.Campaigns.ImportSuppressions(ctx, []byte("phone_number\n+14155557004\n+14155557003\n"))
	check("import suppressions", err)
	if imp.Added != 1 || imp.Duplicates != 1 {
		t.Errorf("import: %+v", imp)
	}
	entries, _, err := c.Campaigns.Suppressions(ctx, data.PageRequest{})
	check("suppressions", err)
	if len(entries) != 2 {
		t.Errorf("suppressions: %d", len(entries))
	}
	onePerPage := tr.s.client(t, client.WithPageSize(1))
	listed, err := client.Collect(onePerPage.Campaigns.AllSuppressions(ctx))
	check("all suppressions", err)
	if len(listed) != 2 || listed[1].ID != sup.ID {
		t.Errorf("all suppressions, one a page: %+v", listed)
	}
	canceledRs, err := client.Collect(onePerPage.Campaigns.AllRecipients(ctx, two.ID, data.RecipientFilter{}))
	check("all recipients", err)
	if len(canceledRs) != 1 || canceledRs[0].State != data.RecipientCanceled {
		t.Errorf("all recipients of the canceled campaign: %+v", canceledRs)
	}
	check("unsuppress", c.Campaigns.Unsuppress(ctx, sup.ID))
	check("campaign delete", c.Campaigns.Delete(ctx, two.ID))
	if _, _, err := c.Campaigns.Get(ctx, two.ID); !client.IsCode(err, data.ENOTFOUND) {
		t.Errorf("the deleted campaign: %v, want not found", err)
	}
}
