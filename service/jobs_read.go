package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// jobAccess is the one rule of who reads which jobs, applied alike by GET /jobs/{id} and
// GET /jobs (and so by the CLI and the console, which call them): a caller reads a job
// of its workspace when it holds the module the job's kind was registered with (and, on
// a key with scopes, that module's read scope) and may see the job's agent; a kind whose
// jobs work over every agent (JobKind.EveryAgent), and a job of an agent's kind that names
// no agent, only when it sees every agent. Any other job does not exist for it
// (conventions §2, §20).
type jobAccess struct {
	workspaceID string
	// kinds are the registered kinds the caller may read; a kind this process does not
	// know is read by nobody.
	kinds []string
	// agents are the agents whose jobs the caller sees, nil for every agent.
	agents []string
	// agentKinds are, for a caller limited to some agents, the kinds read whose module's
	// records belong to an agent (visibility.agentBound): a job of one of them naming no
	// agent, queued before its kind recorded the agent (campaign.delete_recipients before
	// bbolt schema 18 / migration 0029), may concern an agent the caller does not see, so
	// only callers who see every agent read it, as with an agent's event naming no agent.
	agentKinds []string
}

// jobAccessOf is the rule for p.
func (s *JobService) jobAccessOf(p *data.Principal) jobAccess { return jobAccessFor(s.jobs, p) }

// jobAccessFor is the rule for p over the kinds registered in reg (also job.failed's,
// visibility.go).
func jobAccessFor(reg *jobRegistry, p *data.Principal) jobAccess {
	a := jobAccess{workspaceID: p.WorkspaceID, kinds: []string{}}
	for _, name := range reg.names() {
		k := reg.kind(name)
		if k.EveryAgent && len(p.AgentIDs) > 0 {
			continue // works over agents the caller may not see (JobKind.EveryAgent)
		}
		if p.Allows(data.Read(k.Module)) == nil {
			a.kinds = append(a.kinds, name)
			if len(p.AgentIDs) > 0 && agentBound(k.Module) {
				a.agentKinds = append(a.agentKinds, name)
			}
		}
	}
	if len(p.AgentIDs) > 0 {
		a.agents = p.AgentIDs
	}
	return a
}

// selection is f within what the caller may read: what storage lists.
func (a jobAccess) selection(f data.JobFilter) data.JobSelection {
	return data.JobSelection{JobFilter: f, Kinds: a.kinds, Agents: a.agents, AgentKinds: a.agentKinds}
}

// allows reports whether the caller reads j.
func (a jobAccess) allows(j *data.JobRecord) bool {
	return j.WorkspaceID == a.workspaceID && a.selection(data.JobFilter{}).Keeps(&j.Job)
}

// Job implements data.JobService.
func (s *JobService) Job(ctx context.Context, id string) (*data.Job, error) {
	p := data.PrincipalFrom(ctx)
	if p == nil || p.WorkspaceID == "" || !data.ValidID(data.PrefixJob, id) {
		return nil, data.NotFound("Job")
	}
	var j *data.JobRecord
	if err := s.store.View(ctx, func(tx Tx) (err error) {
		j, err = tx.Job(id)
		return err
	}); err != nil {
		return nil, err
	}
	if j == nil || !s.jobAccessOf(p).allows(j) {
		return nil, data.NotFound("Job")
	}
	return &j.Job, nil
}

// ListJobs implements data.JobService. Storage selects by the same rule as Job, in its
// index walk, so a page holds only what the caller may read and costs what a page costs
// (docs/jobs.md, "Finding a job").
func (s *JobService) ListJobs(ctx context.Context, f data.JobFilter, req data.PageRequest) ([]*data.Job, data.Page, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	rules := validate.Combine(validate.JobFilterRange(f), validate.JobKindKnown(f.Kind, s.jobs.names()))
	if err := checkInput(ctx, rules); err != nil {
		return nil, data.Page{PerPage: req.PerPage}, err
	}
	access := s.jobAccessOf(p)
	var records []*data.JobRecord
	var page data.Page
	if err := s.store.View(ctx, func(tx Tx) (err error) {
		records, page, err = tx.ListJobs(p.WorkspaceID, access.selection(f), req)
		return err
	}); err != nil {
		return nil, page, err
	}
	list := make([]*data.Job, 0, len(records))
	for _, j := range records {
		if access.allows(j) { // storage applied the rule; a job it let through by mistake is still not shown
			list = append(list, &j.Job)
		}
	}
	return list, page, nil
}
