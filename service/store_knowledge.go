package service

import (
	"context"
	"io"

	"github.com/voiceapi/voiceapi/data"
)

// KnowledgeTx stores knowledge bases, their sources, the sources' chunks and the url
// sources waiting for a fetch. Retrieval indexes are not storage: the service builds them
// from the chunks.
type KnowledgeTx interface {
	// KnowledgeBase returns a knowledge base's own fields (name, workspace, timestamps),
	// its source lists left nil (KnowledgeBaseSources fills them); nil when absent.
	KnowledgeBase(id string) (*data.KnowledgeBase, error)
	// KnowledgeBaseSources sets kb's Texts, URLs and Files from its stored sources, each
	// list oldest first and never nil.
	KnowledgeBaseSources(kb *data.KnowledgeBase) error
	// KnowledgeBasePage returns a page of the workspace's knowledge bases, newest first,
	// each with its sources.
	KnowledgeBasePage(workspaceID string, req data.PageRequest) ([]*data.KnowledgeBase, data.Page, error)
	// InsertKnowledgeBase stores a new knowledge base's own fields and indexes it under
	// its workspace (for pages and the knowledge_bases quota). Sources go in by PutSource.
	InsertKnowledgeBase(kb *data.KnowledgeBase) error
	// PutKnowledgeBase rewrites a stored knowledge base's own fields (name, updated_at);
	// its sources are left as they are.
	PutKnowledgeBase(kb *data.KnowledgeBase) error
	// DeleteKnowledgeBase removes a knowledge base with its sources, chunks and pending
	// fetches, and runs the storage's knowledge base cascade (every agent of the workspace
	// drops the id from its knowledge_base_ids). Its files are removed once the
	// transaction commits.
	DeleteKnowledgeBase(kb *data.KnowledgeBase) error

	// KnowledgeSource returns one source of a knowledge base, nil when absent.
	KnowledgeSource(kbID, sourceID string) (*data.KnowledgeSource, error)
	// KnowledgeSources returns every source of a knowledge base as stored, in id order.
	KnowledgeSources(kbID string) ([]*data.KnowledgeSource, error)
	// CountKnowledgeSources counts the sources of a knowledge base, every type together.
	CountKnowledgeSources(kbID string) (int, error)
	// PutKnowledgeSource stores a source, new or changed. A url source whose status is
	// pending is listed by PendingURLSources until it is put with another status.
	PutKnowledgeSource(s *data.KnowledgeSource) error
	// DeleteKnowledgeSource removes a source with its chunks and pending fetch; a file
	// source's file is removed once the transaction commits.
	DeleteKnowledgeSource(s *data.KnowledgeSource) error
	// PendingURLSources lists the url sources waiting for a fetch, in every workspace,
	// in a stable order (by knowledge base id, then source id).
	PendingURLSources() ([]*data.KnowledgeSource, error)

	// PutSourceChunks replaces the chunks of a source by chunks, in order (none: the
	// source has no chunks).
	PutSourceChunks(kbID, sourceID string, chunks []data.SourceChunk) error
	// SourceChunks returns the chunks of one source in order, none when it has none.
	SourceChunks(kbID, sourceID string) ([]data.SourceChunk, error)
	// ChunksRevision returns a number that differs whenever the knowledge base's chunks
	// differ (every PutSourceChunks and source delete moves it on), 0 when it has none:
	// a cached retrieval index checks it, as another process sharing the store (a
	// replica) may have changed them.
	ChunksRevision(kbID string) (uint64, error)
	// EachSourceChunks calls fn once per source of the knowledge base that has chunks,
	// with its chunks in order; fn must not keep the slice.
	EachSourceChunks(kbID string, fn func(sourceID string, chunks []data.SourceChunk) error) error

	// OnCommit runs fn after the transaction commits, in commit order with other
	// transactions' functions; never when it rolls back or runs again.
	OnCommit(fn func())
}

// SourceFiles keeps the original bytes of file sources, outside transactions: a file is
// stored durably BEFORE the transaction that stores its source row, so a committed row
// always has its file. Each engine removes at its next start the files whose source row
// never committed (a crash between the two steps) or was deleted.
type SourceFiles interface {
	// PutSourceFile stores the file of a source durably (on disk or in the database)
	// before returning, under a name no reader sees until it is complete.
	PutSourceFile(ctx context.Context, workspaceID, kbID, sourceID string, r io.Reader) error
	// OpenSourceFile opens a stored file; absent files are data.ENOTFOUND.
	OpenSourceFile(ctx context.Context, workspaceID, kbID, sourceID string) (io.ReadSeekCloser, error)
	// DiscardSourceFiles removes files whose source rows did not commit (a failed
	// transaction); absent files are no error.
	DiscardSourceFiles(ctx context.Context, workspaceID, kbID string, sourceIDs []string) error
}
