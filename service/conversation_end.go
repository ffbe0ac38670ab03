package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
)

// A conversation's end stores the call it becomes. That call is redacted like every other
// (writeRedacted): before the write transaction, so redaction's cost never holds the
// store's writer (issue 23). So the call is built from the conversation as read, and the
// write checks the conversation is still that one before the call and the end commit
// together.

// errConversationMoved says that a conversation changed between the read its end was
// built from and the write transaction.
var errConversationMoved = errors.New("the conversation changed while its end was prepared")

// maxEndRounds bounds how often an end is prepared again because its conversation
// changed meanwhile (a message came in): a request that loses that many times is told to
// retry.
const maxEndRounds = 3

// endingCall builds the call c becomes when it ends for reason (conventions §21), from all
// its items, complete and checked but not yet redacted: direction web, the transcript with
// tool items, the variables, the disconnection reason, the usage and any transfer in its
// metadata.
func (s *ConversationService) endingCall(c *data.StoredConversation, items []data.ConversationItem, reason string, transfer *data.PhoneDirectoryEntry) (*data.Call, error) {
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
	return call, completeCall(call, now)
}

// writeEnd stores raw (built by endingCall from items, every item of the conversation)
// redacted as every call is, and the conversation it ends, which from then on keeps no
// more than its call: its items, tool calls and variables are replaced by their redacted
// form in the same transaction (docs/conversations.md, "After the end"). One redaction
// pass serves both: the items are redacted and the call's transcript built from them. In
// the write transaction, load returns the conversation as it is now, having checked it is
// still the one raw was built from (else an error: errConversationMoved when reading it
// again may succeed), given the items as the end keeps them (redacted, or items when no
// redaction applies); the conversation ended, its call and whatever load wrote then
// commit together, and the answers its messages kept under an Idempotency-Key, which
// hold their turns unredacted, are deleted with them.
func (s *ConversationService) writeEnd(ctx context.Context, raw *data.Call, items []data.ConversationItem, load func(tx Tx, kept []data.ConversationItem) (*data.StoredConversation, error)) (*data.Call, error) {
	var call *data.Call
	var redacted []data.ConversationItem // nil when no redaction applies
	var redactor *redact.Redactor        // the setting the end redacts with
	redactIt := func(r *redact.Redactor) error {
		red := *raw
		call, redacted, redactor = &red, nil, r
		if r == nil {
			return nil
		}
		fitted := fitConversationWork(r, items, call)
		if err := checkConversationWork(r, fitted, call); err != nil {
			return err // only variables past the bound alone, which their own bound prevents
		}
		redacted = redactItems(r, fitted)
		call.Transcript = Transcript(*raw.StartedAt, redacted)
		return redactCall(r, call, callFields{variables: true, analysis: true})
	}
	err := s.writeRedacted(ctx, raw.WorkspaceID, raw.AgentID, redactIt, func(tx Tx) error {
		kept := redacted
		if kept == nil {
			kept = items
		}
		c, err := load(tx, kept)
		if err != nil {
			return err
		}
		if err := conversationUsage(tx, call, c.Usage); err != nil {
			return err
		}
		if err := s.storeNewCall(ctx, tx, call, nil); err != nil {
			return err
		}
		ended, reason, callID := *call.EndedAt, *call.DisconnectionReason, call.ID
		c.Status, c.EndedAt, c.DisconnectionReason, c.CallID, c.Lease = data.ConversationEnded, &ended, &reason, &callID, nil
		c.UpdatedAt = ended
		if redacted != nil {
			c.Variables = call.Variables // the conversation's, redacted as the call's
		}
		if err := tx.PutConversation(c, nil); err != nil {
			return err
		}
		// What its messages' Idempotency-Keys kept holds their turns unredacted; what its
		// start's kept is redacted as the conversation is.
		if _, err := tx.DeleteConversationResponses(c.ID); err != nil {
			return err
		}
		if err := s.redactKeptStarts(tx, c.ID, redactor); err != nil {
			return err
		}
		if redacted == nil {
			return nil
		}
		return tx.RewriteConversationItems(c.ID, redacted)
	})
	if err != nil {
		return nil, err
	}
	return call, nil
}

// redactItems returns items with every match of r replaced by its marker, in what
// redactCall covers on the call they become: each content (the transcript's text) and
// each tool call's arguments and result (the text its tool item's content shows). The
// chunks an agent item retrieved are the knowledge base's text, kept as it keeps it.
func redactItems(r *redact.Redactor, items []data.ConversationItem) []data.ConversationItem {
	out := make([]data.ConversationItem, len(items))
	for i, it := range items {
		it.Content, _ = r.Apply(it.Content)
		if it.ToolCall != nil {
			tc := *it.ToolCall
			tc.Arguments, _ = r.ApplyJSON(tc.Arguments)
			tc.Result, _ = r.ApplyJSON(tc.Result)
			it.ToolCall = &tc
		}
		out[i] = it
	}
	return out
}

// endAsRead ends conversation id as read decides: read returns the conversation and why it
// ends now ("" when it does not: nothing is written, and the call is nil). The call is
// built from the items read with it and redacted outside any transaction, and written
// only while the conversation is unchanged; else it is read again, at most maxEndRounds
// times.
func (s *ConversationService) endAsRead(ctx context.Context, id string, read func(tx Tx) (*data.StoredConversation, string, error)) (*data.Call, error) {
	for round := 1; ; round++ {
		var c *data.StoredConversation
		var items []data.ConversationItem
		var reason string
		err := s.store.View(ctx, func(tx Tx) error {
			var err error
			if c, reason, err = read(tx); err != nil || reason == "" {
				return err
			}
			items, err = tx.ConversationItems(id)
			return err
		})
		if err != nil || reason == "" {
			return nil, err
		}
		raw, err := s.endingCall(c, items, reason, nil)
		if err != nil {
			return nil, err
		}
		call, err := s.writeEnd(ctx, raw, items, func(tx Tx, _ []data.ConversationItem) (*data.StoredConversation, error) {
			now, err := tx.Conversation(id)
			if err != nil {
				return nil, err
			}
			if !s.unchanged(c, now) {
				return nil, errConversationMoved
			}
			return now, nil
		})
		if !errors.Is(err, errConversationMoved) {
			return call, err
		}
		if round == maxEndRounds {
			return nil, data.Errorf(data.EUNAVAILABLE, "The conversation changed while its end was being stored, %d times; retry the request.", round)
		}
	}
}

// unchanged reports whether now is still the conversation was, as read: active, with the
// same items, and no message being answered.
func (s *ConversationService) unchanged(was, now *data.StoredConversation) bool {
	return now != nil && now.Status == data.ConversationActive && now.Items == was.Items &&
		now.UpdatedAt.Equal(was.UpdatedAt.Time) && !s.answering(now)
}

// answering reports whether a message of c is being answered: its lease holds.
func (s *ConversationService) answering(c *data.StoredConversation) bool {
	return c.Lease != nil && c.Lease.Until.After(s.now())
}

// expireIfIdle ends conversation id as expired when nobody wrote to it for
// ConversationIdleTimeout and no message is being answered; the call is nil when it did
// not end it.
func (s *ConversationService) expireIfIdle(ctx context.Context, id string) (*data.Call, error) {
	return s.endAsRead(ctx, id, func(tx Tx) (*data.StoredConversation, string, error) {
		c, err := tx.Conversation(id)
		if err != nil || c == nil || c.Status != data.ConversationActive || !s.idle(c) || s.answering(c) {
			return nil, "", err
		}
		return c, data.EndExpired, nil
	})
}

// conversationUsage gives the call a conversation becomes its model's tokens as
// usage.llm, priced under the workspace's price table like a runtime's usage
// (docs/analysis.md, "Usage"); a conversation that used no tokens has none.
func conversationUsage(tx Tx, call *data.Call, used data.TokenUsage) error {
	call.Usage, call.Cost = nil, nil
	if used == (data.TokenUsage{}) {
		return nil
	}
	lc, err := callLLMConfig(tx, call)
	if errors.Is(err, errCallAgentGone) {
		return nil // deleted meanwhile: no model to name, so no usage
	}
	if err != nil {
		return err
	}
	call.Usage = &data.CallUsage{
		LLM: []data.LLMUsage{{Provider: lc.Provider, Model: modelName(lc), InputTokens: int64(used.InputTokens), OutputTokens: int64(used.OutputTokens)}},
		TTS: []data.TTSUsage{}, STT: []data.AudioUsage{}, Telephony: []data.AudioUsage{}, Analysis: []data.LLMUsage{},
	}
	return priceUsage(tx, call)
}

// answerStartClaim gives a conversation's start its Idempotency-Key claim's answer, res,
// which the claim keeps (data.IdempotencyClaim.KeepAnswer) and a retry is answered:
// written in tx, the insert's, and noted with the conversation, so that its end finds it
// (redactKeptStarts) whatever the order of the end and the start's reply; the server
// keeps nothing over it after the commit. Where redaction applies to the agent's calls,
// it is kept as the end will keep the conversation (redactedStart): the caller reads
// what it gave, but nothing raw is kept under the key to outlive the end, and a retry
// after the end is still this start, never a second conversation. The setting is read
// in tx; the opening is one or two items, cheap to redact.
func (s *ConversationService) answerStartClaim(ctx context.Context, tx Tx, res data.Conversation) error {
	claim := data.IdempotencyClaimFrom(ctx)
	if claim == nil {
		return nil
	}
	r, err := s.redactorIn(tx, res.WorkspaceID, res.AgentID)
	if err != nil {
		return err
	}
	kept := redactedStart(r, res)
	answerClaim(ctx, &kept, nil)
	claim.NoteStartedConversation(res.ID)
	claim.KeepAnswer()
	return nil
}

// redactorIn is the compiled redaction setting for agentID's calls in workspaceID, read
// in tx; nil when it redacts nothing.
func (s *ConversationService) redactorIn(tx Tx, workspaceID, agentID string) (*redact.Redactor, error) {
	cfg, key, err := redactionSetting(tx, workspaceID, agentID)
	if err != nil || key == "" {
		return nil, err
	}
	return s.redactors.get(cfg, key)
}

// redactedStart is a start's answer c as the end keeps the conversation under r: its
// variables and opening redacted, an opening past the work bound withheld; c itself
// when r is nil.
func redactedStart(r *redact.Redactor, c data.Conversation) data.Conversation {
	if r == nil {
		return c
	}
	opening := fitConversationWork(r, c.Messages, &data.Call{Variables: c.Variables})
	c.Messages, c.Variables = redactItems(r, opening), redactObject(r, c.Variables)
	return c
}

// redactKeptStarts brings the answers kept for conversation id's start (under any token)
// under r, the setting its end redacts the conversation with, in tx, the end's: a start
// kept while redaction was off (or narrower) is replayed from then on as the
// conversation is kept, not raw until it expires. Its time stays the start's, so it
// still expires a day after the start. Nothing changes when r is nil.
func (s *ConversationService) redactKeptStarts(tx Tx, id string, r *redact.Redactor) error {
	if r == nil {
		return nil
	}
	kept, err := tx.ConversationStartResponses(id)
	if err != nil {
		return err
	}
	for _, k := range kept {
		resp := k.Response
		if resp.Status == 0 || len(resp.Body) == 0 {
			continue // only a claim: no answer to redact
		}
		next := *resp
		if err := s.redactKeptStart(&next, r); err != nil {
			// Unreadable, it cannot be redacted, and must neither stay nor stop the end
			// (an idle conversation must end): only its claim is kept, which a retry
			// is told was carried out, never a second conversation.
			s.log.Warn("a conversation start's kept answer could not be redacted at its end: only its claim is kept",
				"conversation_id", id, "error", err)
			next = *claimOnly(resp)
		}
		if err := tx.PutIdempotentResponse(k.TokenID, k.Key, &next); err != nil {
			return err
		}
	}
	return nil
}

// redactKeptStart replaces resp's body, a start's answer sealed, by that answer under r.
func (s *ConversationService) redactKeptStart(resp *data.IdempotentResponse, r *redact.Redactor) error {
	plain, err := s.sealer.Open(string(resp.Body))
	if err != nil {
		return fmt.Errorf("opening it: %w", err)
	}
	var body struct {
		Data data.Conversation `json:"data"`
	}
	if err := data.DecodeJSON([]byte(plain), &body); err != nil {
		return fmt.Errorf("reading it: %w", err)
	}
	raw, err := json.Marshal(redactedStart(r, body.Data))
	if err != nil {
		return err
	}
	resp.Body, resp.Header, err = s.keptBody(raw, nil, true) // as answerStartClaim's answer
	return err
}
