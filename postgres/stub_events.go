package postgres

// Placeholders until the events tables are written: this file goes when they come.

import (
	"context"
	"io"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

var (
	_ = context.Background
	_ io.Reader
	_ time.Time
	_ data.Event
	_ service.EventFilter
)

func (t *tx) EventHead(workspaceID string) (string, error) { panic("postgres: not written yet") }
func (t *tx) AppendEvent(e *data.Event) error              { panic("postgres: not written yet") }
func (t *tx) RelinkEvent(id, prevHash, hash string) error  { panic("postgres: not written yet") }
func (t *tx) SetEventHead(workspaceID, hash string) error  { panic("postgres: not written yet") }
func (t *tx) Event(id string) (*data.Event, error)         { panic("postgres: not written yet") }
func (t *tx) EventPage(workspaceID string, f service.EventFilter, req data.PageRequest) ([]*data.Event, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) EventsNewestFirst(workspaceID string, fn func(e *data.Event) (bool, error)) error {
	panic("postgres: not written yet")
}
func (t *tx) ChainWorkspaces() ([]string, error) { panic("postgres: not written yet") }
func (t *tx) ChainEvents(workspaceID string, fn func(id string, e *data.Event, readErr error) error) error {
	panic("postgres: not written yet")
}
func (t *tx) Webhook(id string) (*data.WebhookRecord, error) { panic("postgres: not written yet") }
func (t *tx) Webhooks(workspaceID string, req data.PageRequest) ([]*data.WebhookRecord, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) WorkspaceWebhooks(workspaceID string) ([]*data.WebhookRecord, error) {
	panic("postgres: not written yet")
}
func (t *tx) PutWebhook(w *data.WebhookRecord) error     { panic("postgres: not written yet") }
func (t *tx) DeleteWebhook(id string) error              { panic("postgres: not written yet") }
func (t *tx) Delivery(id string) (*data.Delivery, error) { panic("postgres: not written yet") }
func (t *tx) Deliveries(webhookID string, req data.PageRequest) ([]*data.Delivery, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) PutDelivery(d *data.Delivery) error { panic("postgres: not written yet") }
func (t *tx) DueDeliveries(now time.Time, limit int, skip func(id string) bool) ([]string, time.Time, error) {
	panic("postgres: not written yet")
}
func (t *tx) Outbox(limit int) ([]string, error)    { panic("postgres: not written yet") }
func (t *tx) RemoveFromOutbox(eventID string) error { panic("postgres: not written yet") }
func (t *tx) KnowledgeBase(id string) (*data.KnowledgeBase, error) {
	panic("postgres: not written yet")
}
func (t *tx) KnowledgeBaseSources(kb *data.KnowledgeBase) error { panic("postgres: not written yet") }
func (t *tx) KnowledgeBasePage(workspaceID string, req data.PageRequest) ([]*data.KnowledgeBase, data.Page, error) {
	panic("postgres: not written yet")
}
func (t *tx) InsertKnowledgeBase(kb *data.KnowledgeBase) error { panic("postgres: not written yet") }
func (t *tx) PutKnowledgeBase(kb *data.KnowledgeBase) error    { panic("postgres: not written yet") }
func (t *tx) DeleteKnowledgeBase(kb *data.KnowledgeBase) error { panic("postgres: not written yet") }
func (t *tx) KnowledgeSource(kbID, sourceID string) (*data.KnowledgeSource, error) {
	panic("postgres: not written yet")
}
func (t *tx) CountKnowledgeSources(kbID string) (int, error)      { panic("postgres: not written yet") }
func (t *tx) PutKnowledgeSource(s *data.KnowledgeSource) error    { panic("postgres: not written yet") }
func (t *tx) DeleteKnowledgeSource(s *data.KnowledgeSource) error { panic("postgres: not written yet") }
func (t *tx) PendingURLSources() ([]*data.KnowledgeSource, error) { panic("postgres: not written yet") }
func (t *tx) PutSourceChunks(kbID, sourceID string, chunks []data.SourceChunk) error {
	panic("postgres: not written yet")
}
func (t *tx) EachSourceChunks(kbID string, fn func(sourceID string, chunks []data.SourceChunk) error) error {
	panic("postgres: not written yet")
}
func (db *DB) PutSourceFile(ctx context.Context, workspaceID, kbID, sourceID string, r io.Reader) error {
	panic("postgres: not written yet")
}
func (db *DB) OpenSourceFile(ctx context.Context, workspaceID, kbID, sourceID string) (io.ReadSeekCloser, error) {
	panic("postgres: not written yet")
}
func (db *DB) DiscardSourceFiles(ctx context.Context, workspaceID, kbID string, sourceIDs []string) error {
	panic("postgres: not written yet")
}
