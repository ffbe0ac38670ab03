package service

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
)

// JobKindNoteStarts is the job kind that brings the answers a conversation's start kept
// before starts were noted (bbolt schema 19, PostgreSQL 0030) to what a start keeps now:
// noted with the conversation it made, so that its end redacts the answer, and redacted
// at once when the conversation had already ended. Storage's upgrade lists the
// candidates (AccountTx.StartsToNote: every answer kept with status 201 and naming no
// conversation); only the sealed body tells a start's, which storage cannot open.
const JobKindNoteStarts = "idempotency.note_starts"

// noteStartsKind is the job kind of that upgrade, run by s, each listed answer in a write
// of its own.
func (s *ConversationService) noteStartsKind() JobKind {
	return s.listedUpgradeKind(listedUpgrade{name: JobKindNoteStarts, each: s.noteKeptStart,
		list: func(tx Tx, ws string, limit int) ([]string, error) {
			kept, err := tx.StartsToNote(ws, limit)
			ids := make([]string, 0, len(kept))
			for _, k := range kept {
				ids = append(ids, fmt.Sprintf("%d:%s", k.TokenID, k.Key))
			}
			return ids, err
		}}, data.ModuleAgents)
}

// noteKeptStart looks at listed answer id ("<token id>:<key>") of workspace ws: a start's
// is noted with its conversation, redacted under the current setting when that
// conversation has ended (as the end would have), and cut to its claim when it was
// deleted with its call (as deleteConversation would have) or its agent was deleted (as
// cutKeptAnswersOfDeleted would have); any other is only taken off the list.
func (s *ConversationService) noteKeptStart(ctx context.Context, ws, id string) error {
	token, key, _ := strings.Cut(id, ":")
	tokenID, err := strconv.ParseInt(token, 10, 64)
	if err != nil {
		return fmt.Errorf("a listed answer %q: %w", id, err)
	}
	var kept *data.IdempotentResponse
	var c *data.StoredConversation
	var conversationID string
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		if kept, err = tx.IdempotentResponse(tokenID, key); err != nil || kept == nil {
			return err
		}
		if conversationID = s.startedBy(kept); conversationID == "" {
			return nil
		}
		if c, err = tx.Conversation(conversationID); err == nil && c != nil && c.WorkspaceID != ws {
			c, conversationID = nil, ""
		}
		return err
	})
	if err != nil {
		return err
	}
	unlist := func(tx Tx) error { return tx.StartNoted(ws, tokenID, key) }
	if conversationID == "" { // not a start's answer
		return s.store.Update(ctx, unlist)
	}
	note := func(tx Tx, redactor *redact.Redactor) error {
		now, err := tx.IdempotentResponse(tokenID, key)
		if err != nil {
			return err
		}
		if now == nil || now.ClaimID != kept.ClaimID || now.StartedConversationID != "" {
			return unlist(tx) // purged or replaced meanwhile
		}
		now.StartedConversationID = conversationID
		// Read in this write: an end or a delete that committed since the read above did
		// not find this answer noted.
		conv, err := tx.Conversation(conversationID)
		if err != nil {
			return err
		}
		if conv == nil { // deleted with its call: cut to its claim, as the delete would have
			now = claimOnly(now)
		} else if found, _, err := tx.AgentRef(ws, conv.AgentID); err != nil {
			return err
		} else if !found { // its agent deleted: cut, as the agent's delete would have
			now = claimOnly(now)
		}
		if err := tx.PutIdempotentResponse(tokenID, key, now); err != nil {
			return err
		}
		if conv != nil && conv.Status == data.ConversationEnded {
			if err := s.redactKeptStarts(tx, conversationID, redactor); err != nil {
				return err
			}
		}
		return unlist(tx)
	}
	if c == nil { // gone already: nothing to redact by its agent's setting
		return s.store.Update(ctx, func(tx Tx) error { return note(tx, nil) })
	}
	var redactor *redact.Redactor
	return s.writeRedacted(ctx, ws, c.AgentID, func(r *redact.Redactor) error { redactor = r; return nil }, func(tx Tx) error {
		return note(tx, redactor)
	})
}

// startedBy is the conversation a kept answer's start made: the id of the conversation
// its sealed body holds when it answered a start (201 with a conversation), "" for any
// other answer and for one that cannot be read (it stays as kept, expiring in a day).
func (s *ConversationService) startedBy(kept *data.IdempotentResponse) string {
	if kept.Status != 201 || kept.ConversationID != "" || kept.StartedConversationID != "" || len(kept.Body) == 0 {
		return ""
	}
	plain, err := s.sealer.Open(string(kept.Body))
	if err != nil {
		return ""
	}
	var body struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if data.DecodeJSON([]byte(plain), &body) != nil || !data.ValidID(data.PrefixConversation, body.Data.ID) {
		return ""
	}
	return body.Data.ID
}
