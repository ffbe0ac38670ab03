package service

import (
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// ConversationTx stores conversations (conventions §21): the record, and its items apart,
// numbered in order, so that a turn appends its items instead of rewriting the whole
// conversation. Storage keeps an index of active conversations by updated_at, for the
// sweep that ends idle ones, and of each workspace's active ones, for the bound on open
// conversations, and of the ended ones by the call each became; a workspace's delete
// removes its conversations.
type ConversationTx interface {
	// Conversation returns the conversation with id in any workspace, without its items
	// (Messages nil), nil when there is none.
	Conversation(id string) (*data.StoredConversation, error)
	// ListConversations returns one newest-first page of the workspace's conversations
	// that f selects, without their items; agentIDs, when not nil, keeps those of these
	// agents only. From indexes by workspace and by agent (never a read of every
	// conversation); a deleted one is gone from them in its delete's transaction.
	ListConversations(workspaceID string, f data.ConversationFilter, agentIDs []string, req data.PageRequest) ([]*data.StoredConversation, data.Page, error)
	// ConversationItems returns the conversation's items, oldest first.
	ConversationItems(id string) ([]data.ConversationItem, error)
	// InsertConversation stores a new conversation and its first items (c.Items of them).
	InsertConversation(c *data.StoredConversation, items []data.ConversationItem) error
	// PutConversation replaces a stored conversation's record and appends items as its
	// items number c.Items-len(items) to c.Items-1, moving its idle index entry.
	PutConversation(c *data.StoredConversation, items []data.ConversationItem) error
	// RewriteConversationItems replaces the stored items of conversation id, one for
	// one, with items (all of them, in order): an ended conversation's with their
	// redacted form.
	RewriteConversationItems(id string, items []data.ConversationItem) error
	// ConversationOfCall returns the id of the conversation that became the call with
	// callID, "" when none did (from an index by call, never a read of every
	// conversation).
	ConversationOfCall(callID string) (string, error)
	// DeleteConversation removes the conversation with id, its items and its index
	// entries; an absent one is no error.
	DeleteConversation(id string) error
	// ConversationsToRedact returns up to limit ids of the workspace's conversations
	// that ended before an ended conversation was redacted with its call (listed by the
	// storage upgrade: bbolt schema 12, PostgreSQL migration 0024; only a move adds
	// to the list after, carrying it), for the job that redacts them (conversation_upgrade.go).
	ConversationsToRedact(workspaceID string, limit int) ([]string, error)
	// ConversationRedacted takes conversation id off its workspace's list.
	ConversationRedacted(workspaceID, id string) error
	// ListConversationToRedact puts stored conversation id on its workspace's list, as
	// the upgrade did: the move carries the list, so the job redacts on the destination
	// what it had not yet redacted on the source.
	ListConversationToRedact(workspaceID, id string) error
	// IdleConversations returns the ids of up to limit active conversations updated
	// before the time, least recently updated first.
	IdleConversations(before time.Time, limit int) ([]string, error)
	// OpenConversations counts the workspace's active conversations updated after
	// updatedAfter or whose lease holds past leasedAfter, at most limit of them, from an
	// index of its active ones (never a read of every conversation). The service passes
	// the times that make a conversation expired (idle and not answering); the
	// transaction is one of a writer of the workspace, so the count holds until it
	// commits (bbolt's one writer; PostgreSQL's lock and SERIALIZABLE).
	OpenConversations(workspaceID string, updatedAfter, leasedAfter time.Time, limit int) (int, error)
	// ActiveConversationOn returns the id of one of the workspace's active conversations
	// that runs version n of agentID, "" when none does, from the index of its active
	// ones.
	ActiveConversationOn(workspaceID, agentID string, n int) (string, error)
}
