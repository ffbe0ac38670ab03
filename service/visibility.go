package service

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// The one rule of what a caller may read (conventions §6 and §20, docs/api.md "What a
// caller sees"). Every channel that shows records or events applies it: the lists and
// shows, search, the CSV and NDJSON export, analytics, the audit log, the live event
// stream, and webhooks (whose managers must see every event they subscribe to).
//
//   - A record of a module (an agent, a knowledge base, a number, a call) is readable when
//     the caller's role holds the module and, on an API key with scopes, the key holds the
//     module's read scope; an agent, and a call, also needs its agent within the caller's
//     agent_ids.
//   - An event is readable when the record it is about is.
//   - An event about no such record (a security event: keys, members, webhooks, logins,
//     the workspace, its subscription, exports, backups, retention) is readable by those
//     who may read the audit log: owners and admins whose token sees every agent and, on
//     a key with scopes, holds audit:read.
type visibility struct {
	p *data.Principal
	// jobs are the registered job kinds, which say who reads job.failed (the readers of
	// its job, jobs_read.go); nil where no event is judged.
	jobs *jobRegistry
}

// visibilityOf is the rule for p; a nil principal (the CLI, background work) sees all.
func visibilityOf(p *data.Principal) visibility { return visibility{p: p} }

// eventVisibility is the rule for p on events: visibilityOf(p) knowing the job kinds.
func (b *base) eventVisibility(p *data.Principal) visibility {
	return visibility{p: p, jobs: b.jobs}
}

// module reports whether the caller may read records of module.
func (v visibility) module(module string) bool {
	return v.p == nil || slices.Contains(v.p.Modules, module) && v.p.HoldsScope(data.ReadScope(module))
}

// allAgents reports whether the caller sees every agent of the workspace.
func (v visibility) allAgents() bool { return v.p == nil || len(v.p.AgentIDs) == 0 }

// agent reports whether the caller sees agent id (an agent, its calls, their events).
func (v visibility) agent(id string) bool { return v.p == nil || v.p.CanSeeAgent(id) }

// record is the rule for one record of module; agentID is the agent it belongs to, ""
// for a record that belongs to no agent (a knowledge base, a number).
func (v visibility) record(module, agentID string) bool {
	if !v.module(module) {
		return false
	}
	return !agentBound(module) || v.agent(agentID)
}

// conversation is the rule for a conversation with agent agentID: the conversation routes'
// gate (data.ConversationNeed) and the agent.
func (v visibility) conversation(agentID string) bool {
	return v.p == nil || v.p.Allows(data.ConversationNeed) == nil && v.agent(agentID)
}

// memberAgents is a member's agent_ids as the caller may read them: a caller limited to
// some agents reads only those among them, so a member's list never names an agent the
// caller does not see (conventions §2: its existence is never revealed). A list left with
// none reads as data.NoAgent, never as [] (which would say every agent).
func (v visibility) memberAgents(ids []string) []string {
	if v.allAgents() || len(ids) == 0 {
		return ids
	}
	shown := []string{}
	for _, id := range ids {
		if v.agent(id) {
			shown = append(shown, id)
		}
	}
	if len(shown) == 0 {
		return []string{data.NoAgent}
	}
	return shown
}

// numberWritable reports whether the caller may change or delete number n: not when n
// routes calls of an agent the caller does not see (its inbound or outbound agent), nor
// when an open campaign of such an agent dials from it (dialing is its delete's to stop).
// A number belongs to no agent, so a caller limited to some agents reads every number;
// it acts only on those agents (conventions §6), and a number's binding, variables and
// existence decide what another agent's calls do.
func (v visibility) numberWritable(n *data.Number, dialing []*data.Campaign) bool {
	if v.allAgents() {
		return true
	}
	for _, id := range []*string{n.InboundAgentID, n.OutboundAgentID} {
		if id != nil && !v.agent(*id) {
			return false
		}
	}
	for _, c := range dialing {
		if !v.agent(c.AgentID) {
			return false
		}
	}
	return true
}

// knowledgeBaseWritable reports whether the caller may change or delete a knowledge base
// that the agents using (those whose knowledge_base_ids name it) retrieve from: not when
// one of them is an agent the caller does not see. The rule of numbers (numberWritable):
// a knowledge base belongs to no agent, so every reader of the module reads it, but its
// sources decide what another agent answers and its delete changes that agent's
// knowledge_base_ids, and a caller limited to some agents acts only on those
// (conventions §6).
func (v visibility) knowledgeBaseWritable(using []string) bool {
	if v.allAgents() {
		return true
	}
	for _, id := range using {
		if !v.agent(id) {
			return false
		}
	}
	return true
}

// agentBound reports whether module's records belong to an agent.
func agentBound(module string) bool {
	return module == data.ModuleAgents || module == data.ModuleCallHistory || module == data.ModuleAnalytics
}

// audit reports whether the caller may read the audit log, and so security events.
func (v visibility) audit() bool {
	if v.p == nil {
		return true
	}
	return data.RoleAtLeast(v.p.Role, data.RoleAdmin) && v.allAgents() && v.p.HoldsScope(data.ScopeAuditRead)
}

// everything reports whether the rule hides nothing from the caller: a page of events
// then needs no filter. It is data.NeedAuditChain, the requirement of the chain's head
// and verification, which describe every event: who reads those reads every event.
func (v visibility) everything() bool {
	return v.p == nil || v.p.Allows(data.NeedAuditChain()) == nil
}

// agents is the agent restriction a list, search, export or rollup applies for an
// optional filter agent: nil for no restriction (every agent, or the filter's agent when
// the caller sees it); the caller's agents; or none ([]: a hidden agent has no calls, as
// an unknown one has none).
func (v visibility) agents(filter string) []string {
	if v.allAgents() {
		return nil
	}
	if filter != "" {
		if v.agent(filter) {
			return nil // the filter alone narrows the read to a visible agent
		}
		return []string{}
	}
	return v.p.AgentIDs
}

// eventSubject is what an event is about: the module of its record and the member of its
// data naming the record's agent ("" when the record belongs to no agent). A zero
// subject is a security event.
type eventSubject struct {
	module     string
	agentField string
	// job marks job.failed, whose readers are its job's (jobAccess): the module of the
	// job's kind, and its agent when it has one.
	job bool
	// agentRefs are the members of its data that name an agent the record does not
	// belong to, masked for a reader who does not see it (eventShown).
	agentRefs []string
}

// eventSubjects gives each event type its subject. A type missing here is treated as a
// security event (audit log readers only), so a new type is never shown more widely than
// intended; TestEveryEventTypeHasASubject names the types missing.
var eventSubjects = func() map[string]eventSubject {
	m := map[string]eventSubject{}
	for _, t := range []string{data.EventAgentCreated, data.EventAgentUpdated, data.EventAgentDeleted, data.EventAgentPublished, data.EventAgentRestored} {
		m[t] = eventSubject{module: data.ModuleAgents, agentField: "id"}
	}
	// A test's and a run's data, a rollout's and a version's, name their agent as agent_id.
	for _, t := range []string{data.EventAgentTestCreated, data.EventAgentTestUpdated, data.EventAgentTestDeleted,
		data.EventAgentPublishedUntested, data.EventAgentVersionDeleted, data.EventTestRunQueued, data.EventTestRunStarted, data.EventTestRunProgress,
		data.EventTestRunCompleted, data.EventRolloutUpdated, data.EventRolloutEnded, data.EventRolloutRolledBack} {
		m[t] = eventSubject{module: data.ModuleAgents, agentField: "agent_id"}
	}
	// A campaign belongs to its agent and to the call_history module (conventions §25).
	for _, t := range []string{data.EventCampaignCreated, data.EventCampaignStarted, data.EventCampaignPaused,
		data.EventCampaignResumed, data.EventCampaignCanceled, data.EventCampaignCompleted, data.EventCampaignDeleted} {
		m[t] = eventSubject{module: data.ModuleCallHistory, agentField: "agent_id"}
	}
	for _, t := range []string{data.EventCallRegistered, data.EventCallStarted, data.EventCallEnded, data.EventCallAnalyzed, data.EventCallAnalysisFailed} {
		m[t] = eventSubject{module: data.ModuleCallHistory, agentField: "agent_id"}
	}
	m[data.EventJobFailed] = eventSubject{job: true}
	for _, t := range []string{data.EventKnowledgeBaseCreated, data.EventKnowledgeBaseUpdated, data.EventKnowledgeBaseDeleted, data.EventKnowledgeSourceIndexed, data.EventKnowledgeSourceFailed} {
		m[t] = eventSubject{module: data.ModuleKnowledgeBase}
	}
	for _, t := range []string{data.EventNumberCreated, data.EventNumberUpdated, data.EventNumberDeleted} {
		m[t] = eventSubject{module: data.ModulePhoneNumbers, agentRefs: []string{"inbound_agent_id", "outbound_agent_id"}}
	}
	for _, t := range []string{
		data.EventWebhookTest, data.EventWorkspaceUpdated, data.EventWorkspaceUserAdded, data.EventWorkspaceUserUpdated,
		data.EventWorkspaceUserRemoved, data.EventAPIKeyCreated, data.EventAPIKeyRevoked, data.EventWebhookCreated,
		data.EventWebhookUpdated, data.EventWebhookDeleted, data.EventWebhookSecretRotated, data.EventUserLogin,
		data.EventUserLoginFailed, data.EventUserPasswordChanged, data.EventSubscriptionUpdated, data.EventWorkspaceExported,
		data.EventWorkspaceImported, data.EventBackupDownloaded, data.EventRetentionSwept, data.EventPriceTableUpdated,
	} {
		m[t] = eventSubject{}
	}
	return m
}()

// EventAgent is the agent event e is about, "" for none: the member of its data that
// names its record's agent (eventSubjects), and for job.failed its job's agent_id. The
// one statement of it storage lists events by (data.Event.AgentID), at append and in
// bbolt's schema 29 fill; PostgreSQL's migration 0043 states it once more in SQL for its
// backfill, which TestMigrationFillsEventAgents holds to this one.
func EventAgent(e *data.Event) string {
	s := eventSubjects[e.Type]
	switch {
	case s.job:
		return topLevelString(e.Data, "agent_id")
	case s.agentField != "":
		return topLevelString(e.Data, s.agentField)
	}
	return ""
}

// EventKind is the kind of record within its type that decides who reads event e, ""
// for none: for job.failed its job's kind (data's kind, as jobEvent reads the job), whose
// module's readers read it. The one statement of it storage lists events by
// (data.Event.Kind), at append and in bbolt's schema 30 fill; PostgreSQL's migration 0044
// states it once more in SQL for its backfill, which TestMigrationFillsEventKinds holds to
// this one.
func EventKind(e *data.Event) string {
	if eventSubjects[e.Type].job {
		return topLevelString(e.Data, "kind")
	}
	return ""
}

// KindedEventTypes are the event types whose events have a kind (EventKind): bbolt's
// schema 30 fill reads only theirs.
func KindedEventTypes() []string {
	var out []string
	for _, t := range data.EventTypes {
		if eventSubjects[t].job {
			out = append(out, t)
		}
	}
	return out
}

// event is the rule for one event: the record it is about, or the audit log for a
// security event. An agent's event whose data names no agent is shown only to callers
// who see every agent.
func (v visibility) event(e *data.Event) bool {
	s := eventSubjects[e.Type]
	if s.job {
		return v.jobEvent(e)
	}
	if s.module == "" {
		return v.audit()
	}
	if !v.module(s.module) {
		return false
	}
	if s.agentField == "" || v.allAgents() {
		return true
	}
	id := topLevelString(e.Data, s.agentField)
	return id != "" && v.agent(id)
}

// noEventOf reports whether the caller may read no event of type typ, whatever it holds:
// a module it may not read, or a security event without the audit log. A job's event is
// left to its job (jobEvent): some may be readable.
func (v visibility) noEventOf(typ string) bool {
	s := eventSubjects[typ]
	if s.job {
		return false
	}
	if s.module == "" {
		return !v.audit()
	}
	return !v.module(s.module)
}

// eventScopes are the (agent, type) pairs whose events a caller who may not read every
// event may read, of type typ when not "". A caller limited to some agents: each of its
// agents' events of a type it may read (of a module it holds, or job.failed), and the
// events about no agent of a type that names none (knowledge bases, numbers, a job of no
// agent). A caller who sees every agent: every event of a type it may read, whatever its
// agent (AnyAgent). job.failed's pairs are one a job kind the caller reads (jobAccess),
// its events of that kind (EventScope.Kind), and about no agent only for a kind whose
// jobs may name none for it (not of agentKinds). A page walks these alone
// (EventFilter.Scopes), so the events of another agent, of a type or of a job kind it may
// not read neither cost nor shape it. nil for a caller who reads everything, whose page
// walks every event.
func (v visibility) eventScopes(typ string) []EventScope {
	if v.everything() {
		return nil
	}
	var agents []string
	if !v.allAgents() {
		agents = slices.Clone(v.p.AgentIDs)
		slices.Sort(agents)
		agents = slices.Compact(agents)
	}
	scopes := []EventScope{}
	for _, t := range data.EventTypes {
		if typ != "" && t != typ || v.noEventOf(t) {
			continue
		}
		s := eventSubjects[t]
		if s.job {
			scopes = append(scopes, v.jobScopes(t, agents)...)
			continue
		}
		if agents == nil {
			scopes = append(scopes, EventScope{Type: t, AnyAgent: true})
			continue
		}
		if s.agentField == "" {
			scopes = append(scopes, EventScope{Type: t})
			continue
		}
		for _, a := range agents {
			scopes = append(scopes, EventScope{Agent: a, Type: t})
		}
	}
	return scopes
}

// jobScopes are eventScopes' pairs of typ, job.failed, for a caller of agents (nil for
// every agent): one a job kind it reads, as jobAccess reads a job of that kind.
func (v visibility) jobScopes(typ string, agents []string) []EventScope {
	if v.jobs == nil {
		return nil // no job kind judged: jobEvent reads none
	}
	access := jobAccessFor(v.jobs, v.p)
	var out []EventScope
	for _, k := range access.kinds {
		if agents == nil {
			out = append(out, EventScope{Type: typ, Kind: k, AnyAgent: true})
			continue
		}
		if !slices.Contains(access.agentKinds, k) {
			out = append(out, EventScope{Type: typ, Kind: k})
		}
		for _, a := range agents {
			out = append(out, EventScope{Agent: a, Type: typ, Kind: k})
		}
	}
	return out
}

// eventType reports whether the caller may read every event of type typ (a webhook
// subscribed to it receives them all).
func (v visibility) eventType(typ string) bool {
	s := eventSubjects[typ]
	if s.job {
		return v.everyJob()
	}
	if s.module == "" {
		return v.audit()
	}
	return v.module(s.module) && (s.agentField == "" || v.allAgents())
}

// lacks names the read scopes, in data.Scopes' order, that the caller's key lacks to read
// every event of types (eventType's rule, by scope alone): a module's read scope, audit:read
// for security events, and for job.failed the read scope of each job kind's module. None
// for a token without scopes, which a role or agent_ids limits instead.
func (v visibility) lacks(types []string) []string {
	if v.p == nil || v.p.Scopes == nil {
		return nil
	}
	need := map[string]bool{}
	for _, typ := range types {
		s := eventSubjects[typ]
		switch {
		case s.job:
			if v.jobs == nil {
				continue
			}
			for _, name := range v.jobs.names() {
				need[data.ReadScope(v.jobs.kind(name).Module)] = true
			}
		case s.module == "":
			need[data.ScopeAuditRead] = true
		default:
			need[data.ReadScope(s.module)] = true
		}
	}
	var out []string
	for _, scope := range data.Scopes {
		if need[scope] && !v.p.HoldsScope(scope) {
			out = append(out, scope)
		}
	}
	return out
}

// jobEvent is the rule for a job.failed event: the caller reads its job (GET /jobs's
// rule, jobAccess), so every channel limits it exactly as the job list does.
func (v visibility) jobEvent(e *data.Event) bool {
	if v.p == nil {
		return true
	}
	var j data.JobRecord
	if v.jobs == nil || json.Unmarshal(e.Data, &j.Job) != nil {
		return false
	}
	return jobAccessFor(v.jobs, v.p).allows(&j)
}

// everyJob reports whether the caller reads every job of the workspace: every agent's,
// of every registered kind.
func (v visibility) everyJob() bool {
	if v.p == nil {
		return true
	}
	if !v.allAgents() || v.jobs == nil {
		return false
	}
	return len(jobAccessFor(v.jobs, v.p).kinds) == len(v.jobs.names())
}

// key names what the rule lets the caller see, for binding cursors of filtered pages:
// "" when it hides nothing.
func (v visibility) key() string {
	if v.everything() {
		return ""
	}
	p := v.p
	return strings.Join([]string{p.Role, strings.Join(p.Modules, ","), strings.Join(p.Scopes, ","), strings.Join(p.AgentIDs, ",")}, "|")
}

// topLevelString returns the string member name of the JSON object raw, "" when it has
// none. It reads members until it finds name, so a call's agent_id (its third member) is
// found without reading the transcript after it.
func topLevelString(raw json.RawMessage, name string) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		key, _ := t.(string)
		if key == name {
			var s string
			if dec.Decode(&s) != nil {
				return ""
			}
			return s
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}
