package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
)

// JobKindRedactEnded is the job kind that brings a workspace's conversations that ended
// before an ended conversation was redacted with its call (docs/conversations.md, "After
// the end") to what an end stores now: each is redacted as its call was, or deleted when
// its call is gone. Storage's upgrade lists them (ConversationTx.ConversationsToRedact);
// nothing adds to the list after, so the job runs once per workspace that had any.
const JobKindRedactEnded = "conversation.redact_ended"

// redactEndedKind is the job kind of that upgrade, run by s, each listed conversation in
// a write of its own (redacted before it, as an end is).
func (s *ConversationService) redactEndedKind() JobKind {
	return s.listedUpgradeKind(listedUpgrade{name: JobKindRedactEnded, each: s.redactEnded,
		list: func(tx Tx, ws string, limit int) ([]string, error) { return tx.ConversationsToRedact(ws, limit) }}, data.ModuleAgents)
}

// redactEnded brings listed conversation id of workspace ws to what an end stores now:
// deleted when its call is gone (it would have gone with it), else its items and
// variables redacted under its call's setting, as writeEnd does, and off the list.
func (s *ConversationService) redactEnded(ctx context.Context, ws, id string) error {
	var c *data.StoredConversation
	var items []data.ConversationItem
	callGone := false
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if c, err = tx.Conversation(id); err != nil || c == nil || c.WorkspaceID != ws || c.Status != data.ConversationEnded {
			c = nil
			return err
		}
		if callGone, err = endedCallGone(tx, c); err != nil || callGone {
			return err
		}
		items, err = tx.ConversationItems(id)
		return err
	})
	switch {
	case err != nil:
		return err
	case c == nil:
		return s.store.Update(ctx, func(tx Tx) error { return tx.ConversationRedacted(ws, id) })
	case callGone:
		return s.dropListedConversation(ctx, ws, id)
	}
	var redacted []data.ConversationItem // nil when no redaction applies
	var variables map[string]any
	var redactor *redact.Redactor
	err = s.writeRedacted(ctx, ws, c.AgentID, func(r *redact.Redactor) error {
		redacted, variables, redactor = nil, nil, r
		if r == nil {
			return nil
		}
		// Withheld past the work bound, as an end withholds it now.
		fitted := fitConversationWork(r, items, &data.Call{Variables: c.Variables})
		if err := checkConversationWork(r, fitted, &data.Call{Variables: c.Variables}); err != nil {
			return err
		}
		redacted, variables = redactItems(r, fitted), redactObject(r, c.Variables)
		return nil
	}, func(tx Tx) error {
		now, err := tx.Conversation(id)
		if err != nil || now == nil { // deleted meanwhile, its place on the list with it
			return err
		}
		if redacted != nil {
			now.Variables = variables
			if err := tx.PutConversation(now, nil); err != nil {
				return err
			}
			if err := tx.RewriteConversationItems(id, redacted); err != nil {
				return err
			}
			// As an end does: the start's kept answer too (none is found for the
			// conversations this job lists, which ended before starts were noted).
			if err := s.redactKeptStarts(tx, id, redactor); err != nil {
				return err
			}
		}
		return tx.ConversationRedacted(ws, id)
	})
	if data.ErrorCode(err) == data.EINVALID {
		// Variables alone past the work bound (their own bound prevents it): a
		// conversation kept raw would break the promise, and its call keeps its
		// redacted transcript.
		s.log.Warn("an ended conversation too long to redact is deleted; its call keeps its transcript", "conversation_id", id, "error", err)
		return s.dropListedConversation(ctx, ws, id)
	}
	return err
}

// endedCallGone reports whether ended conversation c's call is no longer stored.
func endedCallGone(tx Tx, c *data.StoredConversation) (bool, error) {
	if c.CallID == nil {
		return true, nil
	}
	call, err := tx.Call(*c.CallID)
	return err == nil && (call == nil || call.WorkspaceID != c.WorkspaceID), err
}

// dropListedConversation deletes listed conversation id of workspace ws (its call gone,
// or its text too long to redact), and with it its place on the list.
func (s *ConversationService) dropListedConversation(ctx context.Context, ws, id string) error {
	return s.store.Update(ctx, func(tx Tx) error {
		if err := tx.ConversationRedacted(ws, id); err != nil {
			return err
		}
		return deleteConversation(tx, id)
	})
}
