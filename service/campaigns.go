package service

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/phone"
	"github.com/voiceapi/voiceapi/validate"
)

// CampaignService implements data.CampaignService (conventions §25, docs/campaigns.md).
// A campaign belongs to its agent: the call_history module gates it, and a caller limited
// to some agents sees and acts on the campaigns of those agents only. Its dial tasks are
// in service/dial_tasks.go, the outcome of their calls in service/campaign_outcomes.go.
type CampaignService struct {
	*base
	// starts routes each dial task's call as POST /calls/start routes an outbound call.
	starts *CallStartService
}

var _ data.CampaignService = (*CampaignService)(nil)

// Defaults of a campaign created without them (docs/campaigns.md).
var (
	defaultCampaignRetry = data.CampaignRetry{On: []string{data.OutcomeNoAnswer, data.OutcomeBusy}, MaxAttempts: 3, BackoffMinutes: 60}
)

// campaign returns a campaign of p's workspace that p may see; any other is not found.
func campaign(tx Tx, p *data.Principal, id string) (*data.Campaign, error) {
	if !data.ValidID(data.PrefixCampaign, id) {
		return nil, data.NotFound("Campaign")
	}
	c, err := tx.Campaign(id)
	if err != nil {
		return nil, err
	}
	if c == nil || c.WorkspaceID != p.WorkspaceID || !visibilityOf(p).agent(c.AgentID) {
		return nil, data.NotFound("Campaign")
	}
	return c, nil
}

// CreateCampaign implements data.CampaignService: the recipients are checked, normalized,
// merged and checked against the suppression list and the agent's variables, and the
// campaign is stored with all of them in one transaction, or nothing is.
func (s *CampaignService) CreateCampaign(ctx context.Context, in data.CampaignCreate) (*data.Campaign, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	// National numbers are read in the region of the caller id, known only from storage.
	// Read before the write, it cannot go stale: a number's phone number and workspace
	// never change, and the write reads the number again (campaignRefs), so one deleted
	// meanwhile refuses the campaign (TestCampaignCreateRechecksItsNumberInTheWrite).
	region := ""
	if data.ValidID(data.PrefixNumber, in.NumberID) {
		if err := s.store.View(ctx, func(tx Tx) error {
			n, err := tx.Number(in.NumberID)
			if err == nil && n != nil && n.WorkspaceID == p.WorkspaceID {
				region = phone.Region(n.PhoneNumber)
			}
			return err
		}); err != nil {
			return nil, err
		}
	}
	numbers, err := validate.CampaignCreate(in, region)
	refs := func(tx Tx) error {
		_, _, err := s.campaignRefs(ctx, tx, p, in)
		return err
	}
	if err := s.checkInputAndRefs(ctx, err, refs); err != nil {
		return nil, err
	}
	var c *data.Campaign
	err = s.store.Update(ctx, func(tx Tx) error {
		var err error
		c, err = s.insertCampaign(ctx, tx, p, in, numbers)
		return err
	})
	return c, err
}

// insertCampaign checks the references, builds the campaign and its recipients, and
// stores them with their events, in tx.
func (s *CampaignService) insertCampaign(ctx context.Context, tx Tx, p *data.Principal, in data.CampaignCreate, numbers []string) (*data.Campaign, error) {
	agent, number, err := s.campaignRefs(ctx, tx, p, in)
	if err != nil {
		return nil, err
	}
	if err := checkOpenCampaigns(tx, p.WorkspaceID); err != nil {
		return nil, err
	}
	now := s.now()
	c := &data.Campaign{
		ID: s.ids.New(data.PrefixCampaign), WorkspaceID: p.WorkspaceID, Name: in.Name, AgentID: agent.ID,
		NumberID: number.ID, FromNumber: number.PhoneNumber, Timezone: "UTC", Window: *in.Window,
		MaxConcurrent: *in.MaxConcurrent, Retry: defaultCampaignRetry, StartAt: data.NewTime(now),
		Status: data.CampaignScheduled, CreatedAt: data.NewTime(now), UpdatedAt: data.NewTime(now),
	}
	if in.Timezone != nil {
		c.Timezone = *in.Timezone
	}
	if in.Retry != nil {
		c.Retry = *in.Retry
		if c.Retry.On == nil {
			c.Retry.On = []string{}
		}
	}
	if in.StartAt != nil {
		c.StartAt = *in.StartAt
	}
	recipients, err := s.buildRecipients(tx, c, in, numbers, now)
	if err != nil {
		return nil, err
	}
	if err := s.checkRecipientVariables(tx, agent, number, in, recipients); err != nil {
		return nil, err
	}
	if err := checkKeptRecipients(tx, c.WorkspaceID, c.KeptWeight()); err != nil {
		return nil, err
	}
	if err := tx.InsertCampaign(c, recipients); err != nil {
		return nil, err
	}
	if _, err := s.record(ctx, tx, data.EventCampaignCreated, c.WorkspaceID, c); err != nil {
		return nil, err
	}
	if now.Before(c.StartAt.Time) {
		return c, s.enqueueCampaignStart(tx, c)
	}
	return c, s.startCampaign(ctx, tx, c, now)
}

// campaignRefs returns the campaign's agent (of the workspace, seen by p, published) and
// number (of the workspace); each failure is a 422 on its field.
func (s *CampaignService) campaignRefs(ctx context.Context, tx Tx, p *data.Principal, in data.CampaignCreate) (*data.StoredAgent, *data.Number, error) {
	var errs validate.Errors
	// An id of no id's shape was refused by the rules (checkInputAndRefs): not looked up.
	var a *data.StoredAgent
	var n *data.Number
	var err error
	if data.ValidID(data.PrefixAgent, in.AgentID) {
		if a, err = tx.Agent(in.AgentID); err != nil {
			return nil, nil, err
		}
	}
	switch {
	case a == nil || a.WorkspaceID != p.WorkspaceID || !visibilityOf(p).agent(a.ID):
		errs.Add("agent_id", "The agent_id field must be an agent of this workspace.")
	case a.PublishedVersion == nil:
		errs.Add("agent_id", "The agent has no published version: publish it before a campaign calls with it.")
	default:
		data.NoteClaimAgent(ctx, a.ID)
	}
	if data.ValidID(data.PrefixNumber, in.NumberID) {
		if n, err = tx.Number(in.NumberID); err != nil {
			return nil, nil, err
		}
	}
	switch err := numberUsable(tx, p, n); {
	case n == nil || n.WorkspaceID != p.WorkspaceID:
		errs.Add("number_id", "The number_id field must be a number of this workspace.")
	case data.ErrorCode(err) == data.EFORBIDDEN:
		errs.Add("number_id", "The number routes or dials calls of an agent outside your access (agent_ids): dial from a number of your agents.")
	case err != nil:
		return nil, nil, err
	}
	return a, n, errs.Err()
}

// numberUsable is the rule of dialing from n: the caller's campaign would call from a
// number whose calls back reach its bound agents, and would make n read-only to their
// members (an open campaign of an agent they do not see dials from it), so p dials only
// from a number it may change (checkNumberWritable). Nil for no number of p's workspace.
func numberUsable(tx Tx, p *data.Principal, n *data.Number) error {
	if n == nil || n.WorkspaceID != p.WorkspaceID {
		return nil
	}
	return checkNumberWritable(tx, p, n)
}

// buildRecipients merges rows that name one number (later rows' variables and time zone
// over earlier ones'), leaves out suppressed numbers (counted), and makes each recipient
// pending, due at its window's first opening from the campaign's start.
func (s *CampaignService) buildRecipients(tx Tx, c *data.Campaign, in data.CampaignCreate, numbers []string, now time.Time) ([]*data.Recipient, error) {
	c.Import.Rows = int64(len(in.Recipients))
	byNumber := make(map[string]*data.Recipient, len(numbers))
	var order []*data.Recipient
	created := data.NewTime(now)
	for i, row := range in.Recipients {
		num := numbers[i]
		r := byNumber[num]
		if r == nil {
			line := row.Line
			if line == 0 {
				line = i
			}
			r = &data.Recipient{ID: s.ids.New(data.PrefixRecipient), CampaignID: c.ID, WorkspaceID: c.WorkspaceID,
				PhoneNumber: num, Timezone: c.Timezone, Variables: map[string]any{}, State: data.RecipientPending,
				Attempts: []data.RecipientAttempt{}, Line: line, CreatedAt: created, UpdatedAt: created}
			byNumber[num] = r
			order = append(order, r)
		} else {
			c.Import.Duplicates++
		}
		if row.Timezone != nil && *row.Timezone != "" {
			r.Timezone = *row.Timezone
		}
		maps.Copy(r.Variables, row.Variables)
	}
	suppressed, err := tx.SuppressedAmong(c.WorkspaceID, slices.Collect(maps.Keys(byNumber)))
	if err != nil {
		return nil, err
	}
	w := compileWindow(c.Window)
	from := c.StartAt.Time
	if from.Before(now) {
		from = now
	}
	out := make([]*data.Recipient, 0, len(order))
	for _, r := range order {
		if suppressed[r.PhoneNumber] {
			c.Import.Suppressed++
			c.Counts.Suppressed++
			continue
		}
		next := data.NewTime(w.next(from, location(r.Timezone)))
		r.NextAt = &next
		out = append(out, r)
	}
	c.Counts.Total = int64(len(out))
	c.Counts.Pending = int64(len(out))
	return out, nil
}

// maxVariableLines bounds the lines a missing variable's message names.
const maxVariableLines = 10

// checkRecipientVariables refuses recipients that lack a variable the agent's published
// version uses and neither the agent's defaults nor the number give: such a call could
// never start. One error per variable, naming the first lines that lack it.
func (s *CampaignService) checkRecipientVariables(tx Tx, a *data.StoredAgent, n *data.Number, in data.CampaignCreate, recipients []*data.Recipient) error {
	v, err := s.versions.get(tx, a.ID, *a.PublishedVersion)
	if err != nil {
		return err
	}
	base := callValues(v, n, nil, conversation.CallFacts{CallerNumber: "+1", CalledNumber: "+1", CallID: "call", Now: s.now()})
	var needed []string
	for _, name := range conversation.ConfigVariables(&v.cfg) {
		if val, ok := base[name]; !ok || !conversation.ValueAllowed(val) {
			needed = append(needed, name)
		}
	}
	if len(needed) == 0 {
		return nil
	}
	var errs validate.Errors
	for _, name := range needed {
		var lines []string
		count := 0
		for _, r := range recipients {
			if val, ok := r.Variables[name]; ok && conversation.ValueAllowed(val) {
				continue
			}
			count++
			if len(lines) < maxVariableLines {
				lines = append(lines, recipientName(in.FromCSV, r.Line))
			}
		}
		if count > 0 {
			more := ""
			if count > len(lines) {
				more = fmt.Sprintf(" and %d more", count-len(lines))
			}
			lacking := fmt.Sprintf("%d recipients give", count)
			if count == 1 {
				lacking = "1 recipient gives"
			}
			errs.Addf("recipients.variables."+name, "The agent's live version uses {{%s}}, which neither the agent's default_variables, the number's variables nor %s: %s%s. Give it a value in each recipient (a column %s in a CSV), or a default.",
				name, lacking, strings.Join(lines, ", "), more, name)
		}
	}
	return errs.Err()
}

// recipientName names a recipient's row in a message.
func recipientName(csv bool, line int) string {
	if csv {
		return "line " + strconv.Itoa(line)
	}
	return "recipients." + strconv.Itoa(line)
}

// startCampaign moves a scheduled campaign to running at now (campaign.started), and
// straight on to completed when it has no recipient left to dial.
func (b *base) startCampaign(ctx context.Context, tx Tx, c *data.Campaign, now time.Time) error {
	at := data.NewTime(now)
	c.Status, c.StartedAt, c.UpdatedAt = data.CampaignRunning, &at, at
	if err := tx.PutCampaign(c); err != nil {
		return err
	}
	if _, err := b.record(systemContext(ctx), tx, data.EventCampaignStarted, c.WorkspaceID, c); err != nil {
		return err
	}
	return b.completeIfDone(ctx, tx, c, now)
}

// completeIfDone completes a running or paused campaign with no recipient pending or in
// progress (campaign.completed).
func (b *base) completeIfDone(ctx context.Context, tx Tx, c *data.Campaign, now time.Time) error {
	if c.Counts.Open() > 0 || (c.Status != data.CampaignRunning && c.Status != data.CampaignPaused) {
		return nil
	}
	at := data.NewTime(now)
	c.Status, c.FinishedAt, c.UpdatedAt = data.CampaignCompleted, &at, at
	if err := tx.PutCampaign(c); err != nil {
		return err
	}
	_, err := b.record(systemContext(ctx), tx, data.EventCampaignCompleted, c.WorkspaceID, c)
	return err
}

// Campaigns implements data.CampaignService.
func (s *CampaignService) Campaigns(ctx context.Context, f data.CampaignFilter, req data.PageRequest) ([]*data.Campaign, data.Page, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	if err := checkInput(ctx, validate.CampaignFilter(f)); err != nil {
		return nil, data.Page{}, err
	}
	var agents []string
	if !visibilityOf(p).allAgents() {
		agents = p.AgentIDs
	}
	var list []*data.Campaign
	var page data.Page
	err = s.store.View(ctx, func(tx Tx) error {
		list, page, err = tx.Campaigns(p.WorkspaceID, f, agents, req)
		return err
	})
	return list, page, err
}

// Campaign implements data.CampaignService.
func (s *CampaignService) Campaign(ctx context.Context, id string) (*data.Campaign, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	var c *data.Campaign
	err = s.store.View(ctx, func(tx Tx) error {
		c, err = campaign(tx, p, id)
		return err
	})
	return c, err
}

// Recipients implements data.CampaignService. A canceled campaign's pending recipients
// read canceled: they will never be dialed; a filter reads them so too.
func (s *CampaignService) Recipients(ctx context.Context, campaignID string, f data.RecipientFilter, req data.PageRequest) ([]*data.Recipient, data.Page, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	if err := checkInput(ctx, validate.RecipientFilter(f)); err != nil {
		return nil, data.Page{}, err
	}
	var list []*data.Recipient
	var page data.Page
	err = s.store.View(ctx, func(tx Tx) error {
		c, err := campaign(tx, p, campaignID)
		if err != nil {
			return err
		}
		list, page, err = tx.Recipients(campaignID, recipientSelection(c, f.State), req)
		if err == nil && c.Status == data.CampaignCanceled {
			for _, r := range list {
				if r.State == data.RecipientPending {
					r.State, r.NextAt = data.RecipientCanceled, nil
				}
			}
		}
		return err
	})
	return list, page, err
}

// recipientSelection is the stored states a filter on state reads in c: a canceled
// campaign's stored pending recipients read canceled, so none reads pending.
func recipientSelection(c *data.Campaign, state string) StateSelection {
	sel := StateSelection{Filter: state, States: []string{state}}
	if c.Status == data.CampaignCanceled {
		switch state {
		case data.RecipientPending:
			sel.States = nil
		case data.RecipientCanceled:
			sel.States = append(sel.States, data.RecipientPending)
		}
	}
	return sel
}

// PauseCampaign implements data.CampaignService: a paused campaign leases no task; the
// calls in progress run on and their outcomes are recorded.
func (s *CampaignService) PauseCampaign(ctx context.Context, id string) (*data.Campaign, error) {
	return s.move(ctx, id, data.EventCampaignPaused, func(_ Tx, c *data.Campaign, now time.Time) error {
		if c.Status != data.CampaignRunning && c.Status != data.CampaignScheduled {
			return data.Errorf(data.ECONFLICT, "A %s campaign cannot be paused: only a scheduled or running one can.", c.Status)
		}
		c.Status = data.CampaignPaused
		return nil
	})
}

// ResumeCampaign implements data.CampaignService: running again, or scheduled when its
// start_at is still ahead. A campaign whose agent or workspace still cannot dial (the
// reason it would pause itself for) is refused, saying why.
func (s *CampaignService) ResumeCampaign(ctx context.Context, id string) (*data.Campaign, error) {
	return s.move(ctx, id, data.EventCampaignResumed, func(tx Tx, c *data.Campaign, now time.Time) error {
		if c.Status != data.CampaignPaused {
			return data.Errorf(data.ECONFLICT, "A %s campaign cannot be resumed: only a paused one can.", c.Status)
		}
		minutesLeft, _, err := callMinutesLeft(tx, c.WorkspaceID, now)
		if err != nil {
			return err
		}
		if reason, err := campaignBlocked(tx, c, minutesLeft); err != nil || reason != "" {
			if err != nil {
				return err
			}
			return data.Errorf(data.ECONFLICT, "The campaign cannot be resumed yet (%s). %s", reason, data.CampaignPauseHelp[reason])
		}
		c.Status, c.PauseReason = data.CampaignRunning, nil
		if c.StartedAt == nil {
			c.Status = data.CampaignScheduled
		}
		return nil
	})
}

// CancelCampaign implements data.CampaignService: nothing more is dialed; calls in
// progress run on, and their outcomes are recorded without retries.
func (s *CampaignService) CancelCampaign(ctx context.Context, id string) (*data.Campaign, error) {
	return s.move(ctx, id, data.EventCampaignCanceled, func(_ Tx, c *data.Campaign, now time.Time) error {
		if data.CampaignFinal(c.Status) {
			return data.Errorf(data.ECONFLICT, "A %s campaign cannot be canceled.", c.Status)
		}
		cancelCampaign(c, now)
		return nil
	})
}

// cancelCampaign marks c canceled at now: its pending recipients count as canceled.
func cancelCampaign(c *data.Campaign, now time.Time) {
	at := data.NewTime(now)
	c.Status, c.FinishedAt, c.PauseReason = data.CampaignCanceled, &at, nil
	c.Counts.Canceled += c.Counts.Pending
	c.Counts.Pending = 0
}

// move applies change to a campaign p may change, and records typ.
func (s *CampaignService) move(ctx context.Context, id, typ string, change func(Tx, *data.Campaign, time.Time) error) (*data.Campaign, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	var c *data.Campaign
	err = s.store.Update(ctx, func(tx Tx) error {
		var err error
		if c, err = campaign(tx, p, id); err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), c); err != nil {
			return err
		}
		now := s.now()
		if err := change(tx, c, now); err != nil {
			return err
		}
		c.UpdatedAt = data.NewTime(now)
		if err := tx.PutCampaign(c); err != nil {
			return err
		}
		if _, err := s.record(ctx, tx, typ, c.WorkspaceID, c); err != nil {
			return err
		}
		if c.Status == data.CampaignScheduled {
			return s.enqueueCampaignStart(tx, c)
		}
		if c.Status == data.CampaignRunning && c.StartedAt != nil {
			return s.completeIfDone(ctx, tx, c, now)
		}
		return nil
	})
	return c, err
}

// cancelAgentCampaigns cancels the open campaigns of an agent being deleted, in its
// delete's transaction (a campaign belongs to its agent).
func (b *base) cancelAgentCampaigns(ctx context.Context, tx Tx, ws, agentID string) error {
	ids, err := tx.AgentCampaigns(ws, agentID)
	if err != nil {
		return err
	}
	now := b.now()
	for _, id := range ids {
		c, err := tx.Campaign(id)
		if err != nil || c == nil || data.CampaignFinal(c.Status) {
			if err != nil {
				return err
			}
			continue
		}
		if err := b.cancelInTx(ctx, tx, c, now); err != nil {
			return err
		}
	}
	return nil
}

// checkOpenCampaigns refuses a new campaign (409) when workspace ws has
// validate.MaxOpenCampaigns campaigns not yet final: every dial-task claim reads each of
// them (claim.run), so their number bounds a claim's cost. Counted in the transaction
// that inserts, so creates racing for the last one store one.
func checkOpenCampaigns(tx Tx, ws string) error {
	open, err := tx.OpenCampaigns(ws)
	if err != nil {
		return err
	}
	n := 0
	for _, c := range open {
		if !data.CampaignFinal(c.Status) { // a canceled one is listed until its leases settle
			n++
		}
	}
	if n >= validate.MaxOpenCampaigns {
		return data.Errorf(data.ECONFLICT, "The workspace has %d open campaigns (scheduled, running or paused), the most it may have: cancel one, or wait for one to complete.", n)
	}
	return nil
}

// cancelNumberCampaigns cancels the open campaigns that dial from a number being deleted,
// in its delete's transaction: the phone number is free for anyone to register once the
// delete commits, and a campaign must not go on calling as someone else's caller id.
func (b *base) cancelNumberCampaigns(ctx context.Context, tx Tx, ws, numberID string) error {
	open, err := tx.OpenCampaigns(ws)
	if err != nil {
		return err
	}
	now := b.now()
	for _, c := range open {
		if c.NumberID != numberID || data.CampaignFinal(c.Status) { // listed only until its leases settle
			continue
		}
		if err := b.cancelInTx(ctx, tx, c, now); err != nil {
			return err
		}
	}
	return nil
}

// cancelInTx cancels open campaign c in tx for a record it depends on going
// (campaign.canceled).
func (b *base) cancelInTx(ctx context.Context, tx Tx, c *data.Campaign, now time.Time) error {
	cancelCampaign(c, now)
	c.UpdatedAt = data.NewTime(now)
	if err := tx.PutCampaign(c); err != nil {
		return err
	}
	_, err := b.record(ctx, tx, data.EventCampaignCanceled, c.WorkspaceID, c)
	return err
}
