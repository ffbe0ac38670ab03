package service

import (
	"cmp"
	"context"
	"sync/atomic"
	"time"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/llm"
	"github.com/voiceapi/voiceapi/validate"
)

// ConversationOptions configure conversations with agents (conventions §21).
type ConversationOptions struct {
	// Models builds the language model client for an agent's llm_config (its api_key
	// opened). Conversations answer 503 when it is nil.
	Models func(cfg data.LLMConfig) (llm.Client, error)
	// Functions makes custom_function requests: the server's SSRF-guarded client. A
	// custom function is refused (the model is told) when it is nil.
	Functions conversation.Doer
	// ModelTimeout is the most one model request may take (--llm-timeout);
	// llm.DefaultTimeout when 0. A message's lease is derived from it (leaseSpan).
	ModelTimeout time.Duration
	// MaxOpen is the most conversations a workspace may hold open at once
	// (--max-open-conversations, data.DefaultMaxOpenConversations) when its plan sets no
	// open_conversations limit (openBound); 0: no bound.
	MaxOpen int
}

// conversationLeaseMargin is a message lease's slack past its step's longest bounds: the
// query's embedding (3 s at most), the lease's own writes, replicas' clock skew.
const conversationLeaseMargin = 15 * time.Second

// ConversationService implements data.ConversationService. It keeps no state in the
// process: each message reads the conversation from storage and takes its lease there, so
// any replica can answer the next message of a conversation another one started.
type ConversationService struct {
	*base
	kbs *KnowledgeBaseService
	cfg atomic.Pointer[ConversationOptions]
}

var _ data.ConversationService = (*ConversationService)(nil)

func newConversations(b *base, kbs *KnowledgeBaseService) *ConversationService {
	s := &ConversationService{base: b, kbs: kbs}
	s.Configure(b.opts.Conversations)
	return s
}

// Configure replaces the conversation options: serve wires them once the server's
// settings are known (the SSRF guard, the provider URLs), tests inject a model.
func (s *ConversationService) Configure(o ConversationOptions) { s.cfg.Store(&o) }

func (s *ConversationService) options() *ConversationOptions { return s.cfg.Load() }

// leaseSpan is how long a message's lease holds unless renewed: one step of the answer at
// its longest (a model request, then a custom function's call) and a margin. The answer
// renews it before each step after the first (renewLease), so a long answer keeps it
// while a replica that dies mid-answer blocks its conversation for this long at most.
// While the lease holds, no other message of the conversation is taken, on any replica.
func (s *ConversationService) leaseSpan() time.Duration {
	return cmp.Or(s.options().ModelTimeout, llm.DefaultTimeout) + conversation.MaxFunctionTimeout + conversationLeaseMargin
}

// loadConversation returns a conversation the caller may see: of its workspace, of an
// agent within its agent_ids. Others are not found.
func loadConversation(tx Tx, p *data.Principal, id string) (*data.StoredConversation, error) {
	c, err := tx.Conversation(id)
	if err != nil {
		return nil, err
	}
	if c == nil || c.WorkspaceID != p.WorkspaceID || !visibilityOf(p).agent(c.AgentID) {
		return nil, data.NotFound("Conversation")
	}
	return c, nil
}

// configOf resolves the configuration a conversation runs, its credentials opened: version N,
// or the agent's current configuration for a draft (which needs the right to write
// agents, checked again at each message). live is resolved to its number at the start.
func (s *ConversationService) configOf(tx Tx, p *data.Principal, agentID string, version *int) (*data.AgentConfig, error) {
	agent, err := tx.Agent(agentID)
	if err != nil {
		return nil, err
	}
	if agent == nil || agent.WorkspaceID != p.WorkspaceID || !visibilityOf(p).agent(agentID) {
		return nil, data.NotFound("Agent")
	}
	cfg := agent.AgentConfig
	if version == nil {
		if err := draftTalk(p); err != nil {
			return nil, err
		}
	} else {
		v, err := tx.AgentVersion(agentID, *version)
		if err != nil {
			return nil, err
		}
		if v == nil { // the start checked it (versionRef); a version goes only with its agent
			return nil, data.NotFound("Agent version")
		}
		cfg = v.AgentConfig
	}
	plain, err := openConfig(s.sealer, cfg)
	if err != nil {
		return nil, err
	}
	return &plain, nil
}

// draftTalk refuses a caller without the right to write agents a conversation with an
// agent's draft: talking to it, and ending one still active, which makes its call.
func draftTalk(p *data.Principal) error {
	if err := p.Allows(data.Write(data.ModuleAgents)); err != nil {
		return data.Errorf(data.EFORBIDDEN, "Talking to an agent's draft needs the right to write agents: %s", data.ErrorMessage(err))
	}
	return nil
}

// engine builds the engine of one conversation's configuration.
func (s *ConversationService) engine(p *data.Principal, conversationID string, cfg *data.AgentConfig) (*conversation.Engine, error) {
	o := s.options()
	models := o.Models
	if models == nil {
		return nil, data.Errorf(data.EUNAVAILABLE, "This server has no language model client configured: conversations are off.")
	}
	model, err := models(cfg.LLMConfig)
	if err != nil {
		return nil, err
	}
	e := &conversation.Engine{
		Config: *cfg, Model: model, Functions: o.Functions, Now: s.now,
		Facts: conversation.CallFacts{CallID: conversationID, Location: cfg.PromptConfig.Location()},
	}
	if len(cfg.LLMConfig.KnowledgeBaseIDs) > 0 {
		e.Retriever = &agentRetriever{kbs: s.kbs, workspaceID: p.WorkspaceID, cfg: cfg}
	}
	return e, nil
}

// StartConversation implements data.ConversationService.
func (s *ConversationService) StartConversation(ctx context.Context, agentID string, in data.ConversationStart, obs data.ConversationObserver) (*data.Conversation, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	refs := func(tx Tx) error {
		agent, err := tx.Agent(agentID)
		if err != nil {
			return err
		}
		if err := visible(ctx, agentID, agent); err != nil || in.Version.Number == 0 {
			return err
		}
		_, err = versionRef(tx, agentID, "version", in.Version.Number)
		return err
	}
	if err := s.checkInputAndRefs(ctx, validate.ConversationStart(in), refs); err != nil {
		return nil, err
	}
	id := s.ids.New(data.PrefixConversation)
	var cfg *data.AgentConfig
	var version *int
	err = s.store.View(ctx, func(tx Tx) error {
		agent, err := tx.Agent(agentID)
		if err != nil {
			return err
		}
		if agent == nil || agent.WorkspaceID != p.WorkspaceID || !visibilityOf(p).agent(agentID) {
			return data.NotFound("Agent")
		}
		data.NoteClaimAgent(ctx, agentID)
		switch {
		case in.Version.Draft:
		case in.Version.Number > 0:
			if _, err := versionRef(tx, agentID, "version", in.Version.Number); err != nil {
				return err
			}
			version = &in.Version.Number
		case agent.PublishedVersion == nil:
			return data.Errorf(data.ENOTPUBLISHED, "The agent has no published version: publish it, or talk to its draft (\"version\": \"draft\").")
		default:
			version = agent.PublishedVersion
		}
		if cfg, err = s.configOf(tx, p, agentID, version); err != nil {
			return err
		}
		// Checked before the opening's model call too, to spare it.
		if err := s.checkOpenConversations(tx, p.WorkspaceID); err != nil {
			return err
		}
		return checkCallMinutes(tx, p.WorkspaceID, s.now())
	})
	if err != nil {
		return nil, err
	}
	// The agent's default_variables under the given ones (conventions §23).
	vars := conversation.Merge(cfg.PromptConfig.DefaultVariables, in.Variables)
	facts := conversation.CallFacts{CallID: id, Now: s.now(), Location: cfg.PromptConfig.Location()}
	if missing := conversation.MissingVariables(cfg, conversation.WithBuiltIns(vars, facts)); len(missing) > 0 {
		return nil, data.MissingVariables(missing)
	}
	e, err := s.engine(p, id, cfg)
	if err != nil {
		return nil, err
	}
	out, err := e.Open(ctx, conversation.State{Variables: vars}, obs)
	if err != nil {
		return nil, err
	}
	now := s.timeNow()
	c := &data.StoredConversation{
		Conversation: data.Conversation{
			ID: id, WorkspaceID: p.WorkspaceID, AgentID: agentID, AgentVersion: version, Status: data.ConversationActive,
			Variables: vars, Usage: out.Usage, CreatedAt: now, UpdatedAt: now,
		},
		Items: len(out.Items), StartedBy: p.UserID,
	}
	var res data.Conversation
	err = s.store.Update(ctx, func(tx Tx) error {
		// The agent was checked before the opening, whose model call takes seconds: one
		// deleted meanwhile (alone or with its workspace) must not get a conversation.
		if err := agentStillThere(tx, p.WorkspaceID, agentID); err != nil {
			return err
		}
		// Its version too: a delete checks the active conversations, which this one is not yet.
		if err := versionStillThere(tx, agentID, version); err != nil {
			return err
		}
		// The minutes were checked before the opening too, to spare a model call: a call
		// that used them up meanwhile must leave the start refused, as a register would be.
		if err := checkCallMinutes(tx, p.WorkspaceID, s.now()); err != nil {
			return err
		}
		// Counted again in the transaction that inserts: starts racing for the last slot
		// during their openings, on any replicas, leave one of them in.
		if err := s.checkOpenConversations(tx, p.WorkspaceID); err != nil {
			return err
		}
		if err := tx.InsertConversation(c, out.Items); err != nil {
			return err
		}
		res = c.Conversation
		res.Messages = orEmptyItems(out.Items)
		return s.answerStartClaim(ctx, tx, res)
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// agentStillThere refuses (not found) a write for agent agentID of workspace ws made
// after a model call outside any transaction, when the agent was deleted meanwhile
// (alone or with its workspace).
func agentStillThere(tx Tx, ws, agentID string) error {
	agent, err := tx.Agent(agentID)
	if err != nil {
		return err
	}
	if agent == nil || agent.WorkspaceID != ws {
		return data.NotFound("Agent")
	}
	return nil
}

// versionStillThere refuses (conflict) a conversation's start on version n of agentID
// when the version was deleted during the opening's model call; nil n is the draft.
func versionStillThere(tx Tx, agentID string, n *int) error {
	if n == nil {
		return nil
	}
	v, err := tx.AgentVersion(agentID, *n)
	if err == nil && v == nil {
		err = data.Errorf(data.ECONFLICT, "Version %d of the agent was deleted while the conversation opened: start it again on another version.", *n)
	}
	return err
}

func orEmptyItems(items []data.ConversationItem) []data.ConversationItem {
	if items == nil {
		return []data.ConversationItem{}
	}
	return items
}

// Conversation implements data.ConversationService.
func (s *ConversationService) Conversation(ctx context.Context, id string) (*data.Conversation, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	var c *data.Conversation
	err = s.store.View(ctx, func(tx Tx) error {
		stored, err := loadConversation(tx, p, id)
		if err != nil {
			return err
		}
		items, err := tx.ConversationItems(id)
		if err != nil {
			return err
		}
		c = &stored.Conversation
		c.Messages = orEmptyItems(items)
		return nil
	})
	return c, err
}

// ListConversations implements data.ConversationService: the rule of Conversation
// (loadConversation), in storage's selection: the caller's workspace, the agents it may
// see. A draft's conversations are listed as the show route shows them.
func (s *ConversationService) ListConversations(ctx context.Context, f data.ConversationFilter, req data.PageRequest) ([]*data.ConversationSummary, data.Page, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, data.Page{}, err
	}
	if err := checkInput(ctx, validate.ConversationFilter(f)); err != nil {
		return nil, data.Page{}, err
	}
	var agents []string
	if !visibilityOf(p).allAgents() {
		agents = p.AgentIDs
	}
	var list []*data.ConversationSummary
	var page data.Page
	err = s.store.View(ctx, func(tx Tx) error {
		stored, pg, err := tx.ListConversations(p.WorkspaceID, f, agents, req)
		list, page = make([]*data.ConversationSummary, 0, len(stored)), pg
		for _, c := range stored {
			list = append(list, c.Summary())
		}
		return err
	})
	return list, page, err
}

// EndConversation implements data.ConversationService.
func (s *ConversationService) EndConversation(ctx context.Context, id string) (*data.Call, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	var before *data.Call
	call, err := s.endAsRead(ctx, id, func(tx Tx) (*data.StoredConversation, string, error) {
		before = nil
		c, err := loadConversation(tx, p, id)
		switch {
		case err != nil:
			return nil, "", err
		case c.Status == data.ConversationEnded:
			// The call as stored now, which others may have changed since: call history.
			if !visibilityOf(p).record(data.ModuleCallHistory, c.AgentID) {
				return nil, "", errEndedCallUnreadable(c)
			}
			before, err = endedCall(tx, c)
			return nil, "", err
		case c.AgentVersion == nil:
			// Ending a draft's conversation is acting on the draft (it makes the call):
			// who may not talk to drafts may not end one either.
			if err := draftTalk(p); err != nil {
				return nil, "", err
			}
		}
		switch {
		case s.answering(c):
			return nil, "", errMessageInFlight
		case s.idle(c):
			return c, data.EndExpired, nil
		}
		return c, data.EndUserEnded, nil
	})
	return cmp.Or(call, before), err
}

var errMessageInFlight = data.Errorf(data.ECONFLICT, "A message of this conversation is being answered: wait for its reply.")

// errEndedCallUnreadable refuses the call of an ended conversation to a caller who may
// not read call history: the first end answered the call the conversation became; the
// call as stored now may hold what others added since.
func errEndedCallUnreadable(c *data.StoredConversation) error {
	return data.Errorf(data.EFORBIDDEN, "The conversation has already ended (%s); its call is call history, which this token may not read (the %s module; on a key with scopes, %s).",
		deref(c.DisconnectionReason), data.ModuleCallHistory, data.ReadScope(data.ModuleCallHistory))
}

// endedCall returns the call an ended conversation became (nil when it was deleted since).
func endedCall(tx Tx, c *data.StoredConversation) (*data.Call, error) {
	if c.CallID == nil {
		return nil, data.Errorf(data.ECONFLICT, "The conversation has ended without a call.")
	}
	call, err := tx.Call(*c.CallID)
	if err != nil {
		return nil, err
	}
	if call == nil {
		return nil, data.NotFound("Call")
	}
	return call, nil
}

// idle reports whether nobody wrote to c for ConversationIdleTimeout.
func (s *ConversationService) idle(c *data.StoredConversation) bool {
	return s.now().Sub(c.UpdatedAt.Time) >= data.ConversationIdleTimeout
}

// ExpireIdle ends the conversations idle for ConversationIdleTimeout (expired), at most
// limit of them, each in its own transaction, and returns how many it ended and the last
// failure (a conversation that fails is logged and passed over). A server runs it now and
// then; a message or an end that finds its conversation idle ends it too.
func (s *ConversationService) ExpireIdle(ctx context.Context, limit int) (int, error) {
	var ids []string
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		ids, err = tx.IdleConversations(s.now().Add(-data.ConversationIdleTimeout), limit)
		return err
	})
	if err != nil {
		return 0, err
	}
	ended := 0
	var failed error
	for _, id := range ids {
		call, err := s.expireIfIdle(ctx, id)
		if err != nil {
			// One conversation that cannot end now must not keep the others open: the
			// list is oldest first, so stopping here would meet it first on every pass.
			// A refusal storage logged (a fenced replica) refuses the others alike.
			if ctx.Err() != nil || data.LoggedByStorage(err) {
				return ended, err
			}
			s.log.Warn("ending an idle conversation failed; the next pass tries again", "conversation_id", id, "error", err)
			failed = err
			continue
		}
		if call != nil {
			ended++
		}
	}
	return ended, failed
}
