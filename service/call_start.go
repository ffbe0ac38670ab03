package service

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
	"github.com/voiceapi/voiceapi/validate"
)

// CallStartService implements data.CallStartService (conventions §23, docs/runtime.md):
// number → agent → rollout variant → published version; variables from the version, the
// number and the call; minutes and concurrency checked; the call written; all in one
// write transaction.
type CallStartService struct {
	*base
	// routes remembers the agent each number (or agent) last routed to, so the call's
	// variables can be redacted with that agent's setting before the write transaction,
	// which checks the guess (redaction never runs inside a write: service/redaction.go).
	routes routeGuesses
}

var _ data.CallStartService = (*CallStartService)(nil)

// routed is what the routing decided, inside the write transaction.
type routed struct {
	number  *data.Number // the number that routed the call; nil for an outbound call by agent
	agent   *data.StoredAgent
	version *runVersion
	variant data.CallVariant
}

// errRouteMoved says that the call routed to another agent than the one its variables
// were redacted for: the start redacts again for the right one.
var errRouteMoved = errors.New("the call routes to another agent than guessed")

// maxRouteRounds bounds how often a start redacts again because its route moved.
const maxRouteRounds = 3

// StartCall implements data.CallStartService.
func (s *CallStartService) StartCall(ctx context.Context, in data.CallStart) (*data.CallStartAnswer, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkInput(ctx, validate.CallStart(in)); err != nil {
		return nil, err
	}
	if !mayReadConfig(p) {
		return nil, data.Errorf(data.EFORBIDDEN, "Starting a call answers with the agent's configuration: it needs the right to read agents (the %s module; on a key with scopes, %s or %s).",
			data.ModuleAgents, data.ScopeCallsRuntime, data.ReadScope(data.ModuleAgents))
	}
	now := s.timeNow()
	id := s.ids.New(data.PrefixCall)
	raw := &data.Call{
		ID: id, WorkspaceID: p.WorkspaceID, Direction: in.Direction, FromNumber: in.FromNumber, ToNumber: in.ToNumber,
		Status: data.CallRegistered, Variables: in.Variables, Metadata: in.Metadata,
		CreatedAt: data.NewTime(data.IDTime(data.PrefixCall, id)), UpdatedAt: now,
	}
	normalizeCall(raw)
	var c *data.Call
	redactIt := func(r *redact.Redactor) error {
		red := *raw
		c = &red
		return redactCall(r, c, callFields{variables: true})
	}
	key := routeKey(p.WorkspaceID, in)
	var route *routed
	var vals map[string]any
	var run *data.RunConfig
	for round := 1; ; round++ {
		guess, err := s.guessAgent(ctx, p, in, key)
		if err != nil {
			return nil, err
		}
		err = s.writeRedacted(ctx, p.WorkspaceID, guess, redactIt, func(tx Tx) error {
			var err error
			if route, vals, err = s.register(ctx, tx, p, in, c, guess, key); err != nil {
				return err
			}
			run, err = s.answerStartClaim(ctx, c, route, vals)
			return err
		})
		if !errors.Is(err, errRouteMoved) {
			if err != nil {
				return nil, err
			}
			break
		}
		if round == maxRouteRounds {
			return nil, data.Errorf(data.EUNAVAILABLE, "The call's routing changed while it was being started, %d times; retry the request.", round)
		}
	}
	s.routes.remember(key, route.agent.ID)
	if run == nil {
		if run, err = s.runConfig(route, vals); err != nil {
			return nil, err
		}
	}
	return &data.CallStartAnswer{Call: c, Agent: run, Variant: &route.variant}, nil
}

// answerStartClaim keeps the whole answer ({call, agent, variant}) with the request's
// Idempotency-Key claim, when it has one, so that a retry after a crash that lost the
// response gets what the first request would have answered, not the call's record (the
// claim's answer otherwise, from its call.registered event). Without a key it does
// nothing, and the configuration is built after the write: the hot path's transaction
// stays as short as it was.
func (s *CallStartService) answerStartClaim(ctx context.Context, c *data.Call, route *routed, vals map[string]any) (*data.RunConfig, error) {
	if data.IdempotencyClaimFrom(ctx) == nil {
		return nil, nil
	}
	run, err := s.runConfig(route, vals)
	if err != nil {
		return nil, err
	}
	answerClaimAction(ctx, &data.CallStartAnswer{Call: c, Agent: run, Variant: &route.variant})
	return run, nil
}

// mayReadConfig reports whether p may be answered an agent's configuration: it holds the
// agents module and, on a key with scopes, calls:runtime or agents:read.
func mayReadConfig(p *data.Principal) bool {
	return slices.Contains(p.Modules, data.ModuleAgents) &&
		(p.HoldsScope(data.ReadScope(data.ModuleAgents)) || slices.Contains(p.Scopes, data.ScopeCallsRuntime))
}

// register routes the call in tx (refusing a route to another agent than guess, whose
// redaction setting c was redacted with), checks its variables, the month's minutes and
// the concurrency limits, and stores c routed. It returns the route and the values the
// configuration is filled with.
func (s *CallStartService) register(ctx context.Context, tx Tx, p *data.Principal, in data.CallStart, c *data.Call, guess, key string) (*routed, map[string]any, error) {
	r, err := s.route(ctx, tx, p, in, c.ID)
	if err != nil {
		return nil, nil, err
	}
	if r.agent.ID != guess {
		s.routes.remember(key, r.agent.ID)
		return nil, nil, errRouteMoved
	}
	vals := callValues(r.version, r.number, in.Variables, conversation.CallFacts{
		CallerNumber: deref(in.FromNumber), CalledNumber: deref(in.ToNumber), CallID: c.ID, Now: s.now(),
	})
	if missing := conversation.MissingVariables(&r.version.cfg, vals); len(missing) > 0 {
		return nil, nil, data.MissingVariables(missing)
	}
	if err := checkCallMinutes(tx, p.WorkspaceID, s.now()); err != nil {
		return nil, nil, err
	}
	if err := s.checkConcurrency(ctx, tx, p.WorkspaceID, r.agent, s.now()); err != nil {
		return nil, nil, err
	}
	c.AgentID, c.AgentVersion = r.agent.ID, &r.variant.Version
	if r.number != nil {
		c.NumberID = &r.number.ID
	}
	return r, vals, s.storeNewCall(ctx, tx, c, nil)
}

// route decides, in tx, what the call runs: the number (inbound: to_number's inbound
// agent; outbound: agent_id, else from_number's outbound agent), the agent (of the
// caller's workspace, within its agent_ids, published), and the version (the rollout's
// variant for the call's party, else the published version).
func (s *CallStartService) route(ctx context.Context, tx Tx, p *data.Principal, in data.CallStart, callID string) (*routed, error) {
	r := &routed{}
	var agentID string
	switch in.Direction {
	case data.DirectionInbound:
		n, err := workspaceNumber(tx, p.WorkspaceID, *in.ToNumber)
		if err != nil {
			return nil, err
		}
		if n == nil {
			return nil, data.NotFound("Number")
		}
		if n.InboundAgentID == nil {
			return nil, data.Errorf(data.ECONFLICT, "The number %s has no inbound agent: set its inbound_agent_id.", n.PhoneNumber)
		}
		r.number, agentID = n, *n.InboundAgentID
	default:
		if in.FromNumber != nil {
			n, err := workspaceNumber(tx, p.WorkspaceID, *in.FromNumber)
			if err != nil {
				return nil, err
			}
			r.number = n
		}
		switch {
		case in.AgentID != nil:
			agentID = *in.AgentID
		case r.number == nil:
			return nil, data.NotFound("Number")
		case r.number.OutboundAgentID == nil:
			return nil, data.Errorf(data.ECONFLICT, "The number %s has no outbound agent: set its outbound_agent_id, or name the agent with agent_id.", r.number.PhoneNumber)
		default:
			agentID = *r.number.OutboundAgentID
		}
	}
	a, err := tx.Agent(agentID)
	if err != nil {
		return nil, err
	}
	if a == nil || a.WorkspaceID != p.WorkspaceID || !visibilityOf(p).agent(agentID) {
		return nil, data.NotFound("Agent")
	}
	data.NoteClaimAgent(ctx, agentID)
	if a.PublishedVersion == nil {
		return nil, data.Errorf(data.ENOTPUBLISHED, "The agent %s has no published version: publish it before it takes calls.", a.ID)
	}
	r.agent = a
	r.variant = data.CallVariant{Version: *a.PublishedVersion, Weight: 100}
	ro, err := tx.Rollout(agentID)
	if err != nil {
		return nil, err
	}
	if ro != nil {
		v := variantFor(ro, partyOf(in, callID))
		r.variant = data.CallVariant{Version: v.Version, Weight: v.Weight, Rollout: true}
	}
	if r.version, err = s.versions.get(tx, agentID, r.variant.Version); err != nil {
		return nil, err
	}
	return r, nil
}

// workspaceNumber returns the number registered for phone when it is the workspace's;
// another workspace's number is no number of this one (nil).
func workspaceNumber(tx Tx, ws, phone string) (*data.Number, error) {
	n, err := tx.NumberByPhone(phone)
	if err != nil || n == nil || n.WorkspaceID != ws {
		return nil, err
	}
	return n, nil
}

// runConfig is the answer's configuration: the version with vals substituted everywhere
// conventions §23 lists and its credentials opened (the runtime calls the model and the
// custom functions with them), and the knowledge route. It runs after
// the commit, outside any transaction.
func (s *CallStartService) runConfig(r *routed, vals map[string]any) (*data.RunConfig, error) {
	// Opened before substitution: a sealed header value hides the variables it uses.
	plain, err := openConfig(s.sealer, r.version.cfg)
	if err != nil {
		return nil, err
	}
	cfg, _ := conversation.SubstituteConfig(plain, vals)
	run := &data.RunConfig{ID: r.agent.ID, Name: r.version.name, Version: r.variant.Version, AgentConfig: cfg, Variables: vals}
	if len(cfg.LLMConfig.KnowledgeBaseIDs) > 0 {
		run.Knowledge = &data.KnowledgeRoute{Method: "POST", Path: "/api/v1/agents/" + r.agent.ID + "/knowledge/query",
			Body: map[string]any{"agent_version": r.variant.Version}}
	}
	return run, nil
}

// routeKey names what routes a start before it is routed: the agent it names, else the
// number that decides.
func routeKey(ws string, in data.CallStart) string {
	switch {
	case in.AgentID != nil:
		return ""
	case in.Direction == data.DirectionInbound:
		return ws + "\x00" + *in.ToNumber
	case in.FromNumber != nil:
		return ws + "\x00" + *in.FromNumber
	}
	return ""
}

// guessAgent returns the agent the start most likely routes to, for redacting its
// variables before the write: the one named, the one its number last routed to, or the
// one a read-only routing finds now (the write transaction routes again and checks).
func (s *CallStartService) guessAgent(ctx context.Context, p *data.Principal, in data.CallStart, key string) (string, error) {
	if in.AgentID != nil {
		return *in.AgentID, nil
	}
	if id, ok := s.routes.get(key); ok {
		return id, nil
	}
	var id string
	err := s.store.View(ctx, func(tx Tx) error {
		r, err := s.route(ctx, tx, p, in, "")
		if err == nil {
			id = r.agent.ID
		}
		return err
	})
	if err == nil {
		s.routes.remember(key, id)
	}
	return id, err
}

// maxRouteGuesses bounds routeGuesses; past it the map starts again empty.
const maxRouteGuesses = 16384

// routeGuesses maps a route key to the agent it last routed to.
type routeGuesses struct {
	mu sync.Mutex
	m  map[string]string
}

func (g *routeGuesses) get(key string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, ok := g.m[key]
	return id, ok
}

func (g *routeGuesses) remember(key, agentID string) {
	if key == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil || len(g.m) >= maxRouteGuesses {
		g.m = map[string]string{}
	}
	g.m[key] = agentID
}
