package service

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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
//
// Under an Idempotency-Key the stored turn is the message's change: its claim commits with
// the turn (the user's item included), never with the lease, its renewals or its release,
// so a failed answer leaves no claim and its retry runs again (conventions §17).
func (s *ConversationService) SendMessage(ctx context.Context, id string, in data.ConversationMessage, obs data.ConversationObserver) (*data.ConversationTurn, error) {
	p, err := workspaceCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkInput(ctx, validate.ConversationMessage(in)); err != nil {
		return nil, err
	}
	claim := data.IdempotencyClaimFrom(ctx)
	ctx = data.WithoutIdempotencyClaim(ctx)
	token := leaseToken()
	var c *data.StoredConversation
	var cfg *data.AgentConfig
	var history []data.ConversationItem
	err = s.store.Update(ctx, func(tx Tx) error {
		var err error
		if c, err = loadConversation(tx, p, id); err != nil {
			return err
		}
		claim.NoteAgent(c.AgentID)
		claim.NoteConversation(c.ID)
		if err := claimedMeanwhile(tx, claim); err != nil {
			return err
		}
		switch {
		case c.Status == data.ConversationEnded:
			return data.Errorf(data.ECONFLICT, "The conversation has ended (%s).", deref(c.DisconnectionReason))
		case s.answering(c):
			return errMessageInFlight
		case s.idle(c):
			return errConversationIdle
		}
		if cfg, err = s.configOf(tx, p, c.AgentID, c.AgentVersion); err != nil {
			return err
		}
		if history, err = tx.ConversationItems(id); err != nil {
			return err
		}
		c.Lease = &data.ConversationLease{Token: token, Until: data.NewTime(s.now().Add(s.leaseSpan()))}
		return tx.PutConversation(c, nil)
	})
	if errors.Is(err, errConversationIdle) {
		if _, err := s.expireIfIdle(ctx, id); err != nil {
			return nil, err
		}
		return nil, data.Errorf(data.ECONFLICT, "The conversation has ended (%s): nobody wrote to it for %s.", data.EndExpired, data.ConversationIdleTimeout)
	}
	if err != nil {
		return nil, err
	}
	out, err := s.answer(ctx, p, c, cfg, history, in.Content, token, obs)
	if err != nil {
		s.release(ctx, id, token)
		return nil, err
	}
	if claim != nil {
		ctx = data.WithIdempotencyClaim(ctx, claim)
	}
	turn, err := s.storeTurn(ctx, c, history, token, out)
	if err != nil {
		// A turn refused (the caller's access changed meanwhile) leaves the lease held;
		// one lost is not this token's, and release leaves it.
		s.release(ctx, id, token)
	}
	return turn, err
}

// claimedMeanwhile refuses a message whose Idempotency-Key another request (sent at once
// to another replica) stored its turn under after the server looked for it: that turn
// freed the lease in the same commit, so this lease sees its claim, and the message is
// answered neither twice nor with a second model call.
func claimedMeanwhile(tx Tx, c *data.IdempotencyClaim) error {
	if c == nil {
		return nil
	}
	prev, err := tx.IdempotentResponse(c.TokenID, c.Key)
	if err != nil || prev == nil {
		return err
	}
	return data.Errorf(data.ECONFLICT, "Another request with this Idempotency-Key was carried out at the same time; this one changed nothing. Retry it to get that request's response.")
}

// errConversationIdle says that a message found its conversation idle: it is ended
// (expired) instead of answered.
var errConversationIdle = errors.New("the conversation is idle")

// answer runs the engine under the lease token, renewed before each step: an answer whose
// lease was taken over stops there rather than race the next holder. The whole answer
// takes ConversationAnswerLimit at most.
func (s *ConversationService) answer(ctx context.Context, p *data.Principal, c *data.StoredConversation, cfg *data.AgentConfig, history []data.ConversationItem, text, token string, obs data.ConversationObserver) (*conversation.Outcome, error) {
	e, err := s.engine(p, c.ID, cfg)
	if err != nil {
		return nil, err
	}
	e.Renew = func(ctx context.Context) error { return s.renewLease(ctx, c.ID, token) }
	ctx, cancel := context.WithTimeout(ctx, data.ConversationAnswerLimit)
	defer cancel()
	return e.Reply(ctx, conversation.State{Variables: c.Variables, Items: history}, text, obs)
}

// renewLease extends the lease token holds on conversation id by a span from now; a
// lease no longer token's (it lapsed and another message took it) is a conflict.
func (s *ConversationService) renewLease(ctx context.Context, id, token string) error {
	return s.store.Update(ctx, func(tx Tx) error {
		c, err := tx.Conversation(id)
		if err != nil {
			return err
		}
		if c == nil {
			return data.NotFound("Conversation") // its workspace was deleted meanwhile
		}
		if c.Lease == nil || c.Lease.Token != token {
			return s.errLeaseLost()
		}
		c.Lease.Until = data.NewTime(s.now().Add(s.leaseSpan()))
		return tx.PutConversation(c, nil)
	})
}

// errLeaseLost answers a message whose lease another message took meanwhile.
func (s *ConversationService) errLeaseLost() error {
	return data.Errorf(data.ECONFLICT, "The answer outlasted the conversation's lease (%s without a step ending) and was dropped: send the message again.", s.leaseSpan())
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
	// The lease is the request's own: it is freed even for a caller who lost access.
	err := s.store.Update(withoutAccessRecheck(context.WithoutCancel(ctx)), func(tx Tx) error {
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
// variables tools set and frees the lease, which must still be token. When a tool ended
// the conversation or the turns ran out, the turn and the call the conversation becomes
// commit together; that call is built and redacted before the write from leased (the
// conversation as the lease took it) and its history: nobody else writes a conversation
// while its lease holds. The turn is what the message answers, so an Idempotency-Key's
// claim written with it keeps it (answerClaim) for a retry after a lost answer.
func (s *ConversationService) storeTurn(ctx context.Context, leased *data.StoredConversation, history []data.ConversationItem, token string, out *conversation.Outcome) (*data.ConversationTurn, error) {
	ctx = context.WithoutCancel(ctx)
	id := leased.ID
	take := func(tx Tx) (*data.StoredConversation, error) {
		c, err := tx.Conversation(id)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, data.NotFound("Conversation") // its workspace was deleted meanwhile
		}
		if c.Lease == nil || c.Lease.Token != token {
			return nil, s.errLeaseLost()
		}
		// The answer took seconds outside any transaction: an agent deleted meanwhile
		// answers nothing, as a message sent after its delete is refused (configOf).
		if err := agentStillThere(tx, c.WorkspaceID, c.AgentID); err != nil {
			return nil, err
		}
		s.applyTurn(c, out)
		return c, tx.PutConversation(c, out.Items)
	}
	turn := &data.ConversationTurn{ConversationID: id, Items: out.Items, Usage: out.Usage}
	reason := out.End
	if reason == "" && leased.AgentTurns+1 >= data.ConversationMaxAgentTurns {
		reason = data.EndMaxTurns
	}
	if reason == "" {
		err := s.store.Update(ctx, func(tx Tx) error {
			c, err := take(tx)
			if err == nil {
				turn.Status, turn.DisconnectionReason = c.Status, c.DisconnectionReason
				answerClaim(ctx, turn, nil)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		return turn, nil
	}
	after := *leased
	s.applyTurn(&after, out)
	items := append(slices.Clone(history), out.Items...)
	raw, err := s.endingCall(&after, items, reason, out.Transfer)
	if err != nil {
		return nil, err
	}
	_, err = s.writeEnd(ctx, raw, items, func(tx Tx, kept []data.ConversationItem) (*data.StoredConversation, error) {
		c, err := take(tx)
		if err == nil {
			turn.CallID, turn.Status, turn.DisconnectionReason = &raw.ID, data.ConversationEnded, &reason
			// The end deletes what the conversation's messages kept under their keys, which
			// held their turns unredacted; this turn's claim keeps it as the end stores it.
			asKept := *turn
			asKept.Items = kept[len(history):]
			answerClaim(ctx, &asKept, nil)
		}
		return c, err
	})
	if err != nil {
		return nil, err
	}
	return turn, nil
}

// applyTurn records in c the turn out answered: its items, the agent's turn, the usage,
// the variables tools set; the lease is freed.
func (s *ConversationService) applyTurn(c *data.StoredConversation, out *conversation.Outcome) {
	c.Lease = nil
	c.Items += len(out.Items)
	c.AgentTurns++
	c.Usage = c.Usage.Add(out.Usage)
	c.Variables = conversation.Merge(c.Variables, out.Variables)
	c.UpdatedAt = s.timeNow()
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
