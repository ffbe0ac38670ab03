package service

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// SendMessage implements data.ConversationService: it takes the conversation's lease in
// one transaction, answers outside any transaction (model calls, retrieval, tools), then
// stores the turn and frees the lease in a second one, which checks the lease is still
// its own. A failed answer frees the lease and stores nothing.
func (s *ConversationService) SendMessage(ctx context.Context, id string, in data.ConversationMessage, obs data.ConversationObserver) (*data.ConversationTurn, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkInput(ctx, validate.ConversationMessage(in)); err != nil {
		return nil, err
	}
	token := leaseToken()
	var c *data.StoredConversation
	var cfg *data.AgentConfig
	var history []data.ConversationItem
	expired := false
	err = s.store.Update(ctx, func(tx Tx) error {
		var err error
		expired = false
		if c, err = loadConversation(tx, p, id); err != nil {
			return err
		}
		switch {
		case c.Status == data.ConversationEnded:
			return data.Errorf(data.ECONFLICT, "The conversation has ended (%s).", deref(c.DisconnectionReason))
		case c.Lease != nil && c.Lease.Until.After(s.now()):
			return errMessageInFlight
		case s.idle(c):
			expired = true
			_, err := s.end(ctx, tx, c, data.EndExpired, nil)
			return err
		}
		if cfg, err = s.configOf(tx, p, c.AgentID, c.AgentVersion); err != nil {
			return err
		}
		if history, err = tx.ConversationItems(id); err != nil {
			return err
		}
		c.Lease = &data.ConversationLease{Token: token, Until: data.NewTime(s.now().Add(s.lease()))}
		return tx.PutConversation(c, nil)
	})
	if err != nil {
		return nil, err
	}
	if expired {
		return nil, data.Errorf(data.ECONFLICT, "The conversation has ended (%s): nobody wrote to it for %s.", data.EndExpired, data.ConversationIdleTimeout)
	}
	out, err := s.answer(ctx, p, c, cfg, history, in.Content, obs)
	if err != nil {
		s.release(ctx, id, token)
		return nil, err
	}
	return s.storeTurn(ctx, id, token, out)
}

// answer runs the engine within the lease: an answer that outlives it would race the
// next holder.
func (s *ConversationService) answer(ctx context.Context, p *data.Principal, c *data.StoredConversation, cfg *data.AgentConfig, history []data.ConversationItem, text string, obs data.ConversationObserver) (*conversation.Outcome, error) {
	e, err := s.engine(p, c.ID, cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithDeadline(ctx, c.Lease.Until.Time)
	defer cancel()
	return e.Reply(ctx, conversation.State{Variables: c.Variables, Items: history}, text, obs)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func leaseToken() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// release frees a lease a failed answer held, even when the request was cancelled.
func (s *ConversationService) release(ctx context.Context, id, token string) {
	err := s.store.Update(context.WithoutCancel(ctx), func(tx Tx) error {
		c, err := tx.Conversation(id)
		if err != nil || c == nil || c.Lease == nil || c.Lease.Token != token {
			return err
		}
		c.Lease = nil
		return tx.PutConversation(c, nil)
	})
	if err != nil {
		s.log.Warn("freeing a conversation's lease failed; it lapses by itself", "conversation_id", id, "error", err)
	}
}

// storeTurn appends the turn's items, counts the agent's turn and its usage, takes the
// variables tools set, frees the lease and ends the conversation when a tool ended it or
// the turns ran out.
func (s *ConversationService) storeTurn(ctx context.Context, id, token string, out *conversation.Outcome) (*data.ConversationTurn, error) {
	var turn *data.ConversationTurn
	err := s.store.Update(context.WithoutCancel(ctx), func(tx Tx) error {
		c, err := tx.Conversation(id)
		if err != nil {
			return err
		}
		if c == nil || c.Lease == nil || c.Lease.Token != token {
			return data.Errorf(data.ECONFLICT, "The answer took longer than the conversation's lease (%s) and was dropped: send the message again.", s.lease())
		}
		c.Lease = nil
		c.Items += len(out.Items)
		c.AgentTurns++
		c.Usage = c.Usage.Add(out.Usage)
		c.Variables = conversation.Merge(c.Variables, out.Variables)
		c.UpdatedAt = s.timeNow()
		if err := tx.PutConversation(c, out.Items); err != nil {
			return err
		}
		reason := out.End
		if reason == "" && c.AgentTurns >= data.ConversationMaxAgentTurns {
			reason = data.EndMaxTurns
		}
		turn = &data.ConversationTurn{ConversationID: id, Items: out.Items, Usage: out.Usage}
		if reason != "" {
			call, err := s.end(ctx, tx, c, reason, out.Transfer)
			if err != nil {
				return err
			}
			turn.CallID = &call.ID
		}
		turn.Status, turn.DisconnectionReason = c.Status, c.DisconnectionReason
		return nil
	})
	return turn, err
}

// end ends c for reason and stores the call it becomes (conventions §21): direction web,
// the transcript with tool items, the variables, the disconnection reason, through the
// same insert as every call (its index, search postings and events).
func (s *ConversationService) end(ctx context.Context, tx Tx, c *data.StoredConversation, reason string, transfer *data.PhoneDirectoryEntry) (*data.Call, error) {
	items, err := tx.ConversationItems(c.ID)
	if err != nil {
		return nil, err
	}
	now := s.timeNow()
	callID := s.ids.New(data.PrefixCall)
	metadata := map[string]any{"conversation_id": c.ID, "input_tokens": c.Usage.InputTokens, "output_tokens": c.Usage.OutputTokens}
	if transfer != nil {
		metadata["transferred_to"] = map[string]any{"name": transfer.Name, "phone_number": transfer.PhoneNumber, "transfer_type": transfer.TransferType}
	}
	started := c.CreatedAt
	call := &data.Call{
		ID: callID, WorkspaceID: c.WorkspaceID, AgentID: c.AgentID, AgentVersion: c.AgentVersion,
		Direction: data.DirectionWeb, Status: data.CallEnded, StartedAt: &started, EndedAt: &now,
		DisconnectionReason: &reason, Transcript: Transcript(c.CreatedAt, items),
		Variables: conversation.Merge(c.Variables), Metadata: metadata,
		CreatedAt: data.NewTime(data.IDTime(data.PrefixCall, callID)), UpdatedAt: now,
	}
	if err := s.insertCall(ctx, tx, call, now); err != nil {
		return nil, err
	}
	c.Status, c.EndedAt, c.DisconnectionReason, c.CallID, c.Lease = data.ConversationEnded, &now, &reason, &callID, nil
	c.UpdatedAt = now
	return call, tx.PutConversation(c, nil)
}

// Transcript turns a conversation's items into a call's transcript within the call
// rules (validate/call.go): agent replies that only called tools are left out, each
// tool item reads "name(arguments) → result", a content is cut at
// MaxTranscriptContent characters, and items stop before the bytes or the count run
// over; start_ms counts from the conversation's start.
func Transcript(start data.Time, items []data.ConversationItem) []data.TranscriptItem {
	out := make([]data.TranscriptItem, 0, len(items))
	total := 0
	for _, it := range items {
		if it.Role == data.ItemAgent && it.Content == "" {
			continue
		}
		content := it.Content
		if utf8.RuneCountInString(content) > validate.MaxTranscriptContent {
			content = string([]rune(content)[:validate.MaxTranscriptContent-1]) + "…"
		}
		if total+len(content) > validate.MaxTranscriptBytes || len(out) == validate.MaxTranscriptItems {
			break
		}
		total += len(content)
		at := min(max(it.CreatedAt.Sub(start.Time).Milliseconds(), 0), validate.MaxTranscriptStartMS)
		out = append(out, data.TranscriptItem{Role: it.Role, Content: content, StartMS: at})
	}
	return out
}

// agentRetriever searches the knowledge bases of one configuration with its
// knowledge_base_config; ids that no longer name a knowledge base of the workspace are
// skipped.
type agentRetriever struct {
	kbs         *KnowledgeBaseService
	workspaceID string
	cfg         *data.AgentConfig
}

func (r *agentRetriever) Retrieve(ctx context.Context, query string) ([]data.KnowledgeRef, error) {
	var kbIDs []string
	err := r.kbs.store.View(ctx, func(tx Tx) error {
		for _, id := range r.cfg.LLMConfig.KnowledgeBaseIDs {
			kb, err := tx.KnowledgeBase(id)
			if err != nil {
				return err
			}
			if kb != nil && kb.WorkspaceID == r.workspaceID {
				kbIDs = append(kbIDs, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	k := r.cfg.KnowledgeBaseConfig.ChunksToRetrieve
	if k < 1 {
		k = data.DefaultChunksToRetrieve
	}
	threshold := 0.0
	if t := r.cfg.KnowledgeBaseConfig.SimilarityThreshold; t != nil {
		threshold = *t
	}
	var out []data.KnowledgeRef
	// One search per knowledge base keeps each chunk's base; each gives its best k, so the
	// best k of all are among them.
	for _, id := range kbIDs {
		chunks, err := r.kbs.search(ctx, r.workspaceID, []string{id}, query, k, threshold)
		if err != nil {
			return nil, err
		}
		for _, ch := range chunks {
			out = append(out, data.KnowledgeRef{KnowledgeBaseID: id, SourceID: ch.SourceID, Text: ch.Text, Score: ch.Score})
		}
	}
	slices.SortStableFunc(out, func(a, b data.KnowledgeRef) int { return cmp.Compare(b.Score, a.Score) })
	return out[:min(k, len(out))], nil
}
