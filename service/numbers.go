package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// NumberService manages the phone numbers of the caller's workspace.
type NumberService struct{ *base }

var _ data.NumberService = (*NumberService)(nil)

// workspaceCaller returns the principal of a request that acts in a workspace: numbers,
// calls and analytics have no meaning without one.
func workspaceCaller(ctx context.Context) (*data.Principal, error) {
	p := data.PrincipalFrom(ctx)
	if p == nil || p.WorkspaceID == "" {
		return nil, data.Errorf(data.EUNAUTHORIZED, "A workspace to act in is required.")
	}
	return p, nil
}

// number returns a number of ws; another workspace's number is not found.
func number(tx Tx, ws, id string) (*data.Number, error) {
	n, err := tx.Number(id)
	if err != nil {
		return nil, err
	}
	if n == nil || n.WorkspaceID != ws {
		return nil, data.NotFound("Number")
	}
	return n, nil
}

// checkBindings reports bound agents that are not agents of the workspace or that the
// caller may not see; both read the same, so existence is never revealed.
func checkBindings(tx Tx, p *data.Principal, in, out *string) error {
	var errs validate.Errors
	for _, b := range []struct {
		path string
		id   *string
	}{{"inbound_agent_id", in}, {"outbound_agent_id", out}} {
		if b.id == nil {
			continue
		}
		found := false
		if data.ValidID(data.PrefixAgent, *b.id) { // else the rules refused it: not looked up
			var err error
			if found, _, err = tx.AgentRef(p.WorkspaceID, *b.id); err != nil {
				return err
			}
		}
		if !found || !visibilityOf(p).agent(*b.id) {
			errs.Addf(b.path, "The %s field must be an agent of this workspace.", b.path)
		}
	}
	return errs.Err()
}

// errNumberOfHiddenAgent refuses a change of a number that routes or dials calls of an
// agent outside the caller's agent_ids (visibility.numberWritable).
func errNumberOfHiddenAgent() error {
	return data.Errorf(data.EFORBIDDEN, data.NumberOfHiddenAgent)
}

// checkNumberWritable refuses, in tx, a change of number n by p that would act on calls
// of an agent p does not see: n's bound agents, and the open campaigns dialing from it.
func checkNumberWritable(tx Tx, p *data.Principal, n *data.Number) error {
	ok, err := agentsLetNumberChange(tx, p, n)
	if err != nil {
		return err
	}
	if !ok {
		return errNumberOfHiddenAgent()
	}
	return nil
}

// agentsLetNumberChange reports whether every agent n acts for is one p sees
// (visibility.numberWritable): its bound agents, and those of the open campaigns dialing
// from it, which only a caller limited to some agents reads.
func agentsLetNumberChange(tx Tx, p *data.Principal, n *data.Number) (bool, error) {
	v := visibilityOf(p)
	if v.allAgents() {
		return true, nil
	}
	dialing, err := openCampaignsByNumber(tx, n.WorkspaceID)
	if err != nil {
		return false, err
	}
	return v.numberWritable(n, dialing[n.ID]), nil
}

// openCampaignsByNumber reads the workspace's open campaigns once, by the number each
// dials from: what numberWritable weighs for one number or a page of them.
func openCampaignsByNumber(tx Tx, ws string) (map[string][]*data.Campaign, error) {
	open, err := tx.OpenCampaigns(ws)
	if err != nil {
		return nil, err
	}
	dialing := map[string][]*data.Campaign{}
	for _, c := range open {
		if !data.CampaignFinal(c.Status) {
			dialing[c.NumberID] = append(dialing[c.NumberID], c)
		}
	}
	return dialing, nil
}

// numberAccess is what p may do with n once the agents' verdict (agentsLetNumberChange)
// is known: change it (checkNumberWritable, under the number routes' requirement) and
// dial from it in a campaign (numberUsable, under the campaign create's requirement:
// call_history write).
func numberAccess(p *data.Principal, agentsAllow bool) data.NumberAccess {
	return data.NumberAccess{
		Write: agentsAllow && p.Allows(data.Write(data.ModulePhoneNumbers)) == nil,
		Dial:  agentsAllow && p.Allows(data.Write(data.ModuleCallHistory)) == nil,
	}
}

// fillNumberAccess sets n.Access to what p may do with it, by the rules its writes and
// a campaign's dialing from it are refused by (numberAccess).
func fillNumberAccess(tx Tx, p *data.Principal, n *data.Number) error {
	ok, err := agentsLetNumberChange(tx, p, n)
	n.Access = numberAccess(p, ok)
	return err
}

// fillNumbersAccess is fillNumberAccess for a page of numbers of p's workspace, in a
// bounded number of reads: the open campaigns once for the page (none for a caller who
// sees every agent), whatever its size.
func fillNumbersAccess(tx Tx, p *data.Principal, list []*data.Number) error {
	v := visibilityOf(p)
	var dialing map[string][]*data.Campaign
	if !v.allAgents() && len(list) > 0 {
		var err error
		if dialing, err = openCampaignsByNumber(tx, p.WorkspaceID); err != nil {
			return err
		}
	}
	for _, n := range list {
		n.Access = numberAccess(p, v.numberWritable(n, dialing[n.ID]))
	}
	return nil
}

// givenBinding is the agent a number's update binds, nil when the update leaves the
// binding alone or removes it.
func givenBinding(o data.Opt[*string]) *string {
	if o.Set {
		return o.V
	}
	return nil
}

// ListNumbers implements data.NumberService.
func (s *NumberService) ListNumbers(ctx context.Context, f data.NumberFilter, req data.PageRequest) ([]*data.Number, data.Page, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	if err := validate.NumberFilter(f); err != nil {
		return nil, data.Page{}, err
	}
	v := visibilityOf(p)
	if f.AgentID != "" && !v.agent(f.AgentID) {
		// An agent the caller does not see binds no number it is told of, as one that
		// does not exist: HiddenAgent, which no number is bound to, finds the same none.
		f.AgentID = data.HiddenAgent
	}
	var list []*data.Number
	var page data.Page
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		if list, page, err = tx.Numbers(p.WorkspaceID, NumberSearch{NumberFilter: f, MaxScan: data.MaxNumberSearchScan}, req); err != nil {
			return err
		}
		if err := fillNumbersAccess(tx, p, list); err != nil {
			return err
		}
		for i, n := range list {
			list[i] = v.numberShown(n)
		}
		return nil
	})
	return list, page, err
}

// CreateNumber implements data.NumberService.
func (s *NumberService) CreateNumber(ctx context.Context, in data.NumberCreate) (*data.Number, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	refs := func(tx Tx) error { return checkBindings(tx, p, in.InboundAgentID, in.OutboundAgentID) }
	if err := s.checkInputAndRefs(ctx, validate.NumberCreate(in), refs); err != nil {
		return nil, err
	}
	var n *data.Number
	err = s.store.Update(ctx, func(tx Tx) error {
		if err := refs(tx); err != nil {
			return err
		}
		if err := checkQuota(tx, p.WorkspaceID, data.LimitNumbers); err != nil {
			return err
		}
		now := s.timeNow()
		n = &data.Number{
			ID: s.ids.New(data.PrefixNumber), WorkspaceID: p.WorkspaceID, PhoneNumber: in.PhoneNumber,
			Nickname: in.Nickname, Provider: in.Provider,
			InboundAgentID: in.InboundAgentID, OutboundAgentID: in.OutboundAgentID,
			Variables: orEmptyVars(in.Variables), CreatedAt: now, UpdatedAt: now,
		}
		stored, err := tx.InsertNumber(n)
		if err != nil {
			return err
		}
		if !stored {
			return data.Errorf(data.ECONFLICT, "The number %s is already registered.", in.PhoneNumber)
		}
		if err := fillNumberAccess(tx, p, n); err != nil {
			return err
		}
		// The event's data is the record; the claim keeps the answer, access beside it.
		answerClaim(ctx, n, data.AccessAnswer(n.Access))
		_, err = s.record(ctx, tx, data.EventNumberCreated, p.WorkspaceID, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// Number implements data.NumberService.
func (s *NumberService) Number(ctx context.Context, id string) (*data.Number, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	var n *data.Number
	err = s.store.View(ctx, func(tx Tx) error {
		if n, err = number(tx, p.WorkspaceID, id); err != nil {
			return err
		}
		return fillNumberAccess(tx, p, n)
	})
	if err != nil {
		return nil, err
	}
	return visibilityOf(p).numberShown(n), nil
}

// UpdateNumber implements data.NumberService. Only bindings the update gives are checked:
// a kept one stays valid (an agent's delete unbinds it).
func (s *NumberService) UpdateNumber(ctx context.Context, id string, in data.NumberUpdate) (*data.Number, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	bindings := func(tx Tx) error {
		return checkBindings(tx, p, givenBinding(in.InboundAgentID), givenBinding(in.OutboundAgentID))
	}
	refs := func(tx Tx) error {
		if _, err := number(tx, p.WorkspaceID, id); err != nil {
			return err
		}
		return bindings(tx)
	}
	if err := s.checkInputAndRefs(ctx, validate.NumberUpdate(in), refs); err != nil {
		return nil, err
	}
	var n *data.Number
	err = s.store.Update(ctx, func(tx Tx) error {
		old, err := number(tx, p.WorkspaceID, id)
		if err != nil {
			return err
		}
		// Writable first: a caller limited to some agents holds the ETag of the number as
		// it reads it (HiddenAgent in place of a hidden binding), never the stored one's,
		// so a 412 before the 403 would answer a guess of the binding.
		if err := checkNumberWritable(tx, p, old); err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), old); err != nil {
			return err
		}
		before := storedSnapshot(old)
		next := *old
		setOpt(&next.Nickname, in.Nickname)
		setOpt(&next.Provider, in.Provider)
		setOpt(&next.InboundAgentID, in.InboundAgentID)
		setOpt(&next.OutboundAgentID, in.OutboundAgentID)
		if in.Variables.Set {
			next.Variables = orEmptyVars(in.Variables.V)
		}
		if err := bindings(tx); err != nil {
			return err
		}
		if unchangedSince(before, &next) {
			n = old
			if err := fillNumberAccess(tx, p, n); err != nil {
				return err
			}
			return errNothingToWrite // nothing changed: no write, no event (unchanged.go)
		}
		next.UpdatedAt = s.timeNow()
		if err := tx.PutNumber(&next); err != nil {
			return err
		}
		n = &next
		if err := fillNumberAccess(tx, p, n); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventNumberUpdated, p.WorkspaceID, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// DeleteNumber implements data.NumberService: only a number of the workspace the token
// is bound to.
func (s *NumberService) DeleteNumber(ctx context.Context, id string) error {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx Tx) error {
		n, err := number(tx, p.CurrentWorkspaceID, id)
		if err != nil {
			return err
		}
		if err := checkNumberWritable(tx, p, n); err != nil { // before If-Match: UpdateNumber
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), n); err != nil {
			return err
		}
		if err := s.cancelNumberCampaigns(ctx, tx, n.WorkspaceID, id); err != nil {
			return err
		}
		if err := tx.DeleteNumber(id); err != nil {
			return err
		}
		_, err = s.record(ctx, tx, data.EventNumberDeleted, n.WorkspaceID, n)
		return err
	})
}

// orEmptyVars is vars, or an empty map for none: records show {} rather than null.
func orEmptyVars(vars map[string]any) map[string]any {
	if vars == nil {
		return map[string]any{}
	}
	return vars
}

// setOpt sets *dst to o's value when o was given.
func setOpt[T any](dst *T, o data.Opt[T]) {
	if o.Set {
		*dst = o.V
	}
}
