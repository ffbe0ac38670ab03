package bolt

import (
	"context"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
)

// The workspace import (import.go) still prepares and stores its sources here, with the
// same steps the knowledge base service takes, until it moves to the service layer.

// preparedSource is a source made ready outside any transaction: extraction, chunking and
// embedding are slow, and a write transaction blocks every other writer.
type preparedSource struct {
	row     data.KnowledgeSource
	chunks  []knowledge.Chunk
	content []byte // a file's bytes, written to disk before the metadata commits
}

// prepareSources assigns ids and extracts, chunks and embeds texts and files; kinds are the
// detected formats of in.Files. URLs are left pending.
func (db *DB) prepareSources(ctx context.Context, workspaceID, kbID string, in data.SourcesAdd, kinds []knowledge.Kind) []*preparedSource {
	now := db.timeNow()
	base := func(typ string) data.KnowledgeSource {
		return data.KnowledgeSource{ID: db.ids.New(data.PrefixSource), Type: typ, KnowledgeBaseID: kbID, WorkspaceID: workspaceID, CreatedAt: now}
	}
	var out []*preparedSource
	for i, f := range in.Files {
		ps := &preparedSource{row: base(data.SourceFiles), content: f.Content}
		ps.row.Filename = knowledge.SanitizeFilename(f.Filename)
		ps.row.ContentType = knowledge.ContentType(kinds[i])
		ps.row.SizeBytes = int64(len(f.Content))
		ps.row.SHA256 = sha256Hex(f.Content)
		text, err := knowledge.Extract(kinds[i], f.Content)
		db.index(ctx, ps, text, err)
		out = append(out, ps)
	}
	for _, t := range in.Texts {
		ps := &preparedSource{row: base(data.SourceTexts)}
		ps.row.Title, ps.row.Content = t.Title, t.Content
		db.index(ctx, ps, t.Content, nil)
		out = append(out, ps)
	}
	for _, u := range in.URLs {
		ps := &preparedSource{row: base(data.SourceURLs)}
		ps.row.URL, ps.row.Status, ps.row.Attempt = u, data.SourcePending, 1
		out = append(out, ps)
	}
	return out
}

// index chunks and embeds a source's extracted text, or marks it failed with the reason.
func (db *DB) index(ctx context.Context, ps *preparedSource, text string, err error) {
	if err == nil {
		ps.chunks, err = knowledge.ChunkSource(ps.row.ID, text)
	}
	if err != nil {
		reason := knowledge.Reason(err)
		ps.row.Status, ps.row.Error, ps.row.IndexedAt, ps.chunks = data.SourceFailed, &reason, nil, nil
		return
	}
	if err := knowledge.EmbedChunks(context.WithoutCancel(ctx), db.opts.Knowledge.Embedder, ps.chunks); err != nil {
		db.log.Warn("embedding chunks failed; they are indexed lexically only", "error", err)
	}
	ps.row.Status, ps.row.Error, ps.row.IndexedAt = data.SourceIndexed, nil, db.timeNow().Ptr()
}

// storeSources writes prepared sources of a new knowledge base, their chunks, pending
// fetches and events in tx.
func (db *DB) storeSources(ctx context.Context, tx *bbolt.Tx, kb *kbRow, prepared []*preparedSource) error {
	for _, ps := range prepared {
		if err := putSource(tx, &ps.row); err != nil {
			return err
		}
		if err := putChunks(tx, kb.ID, ps.row.ID, sourceChunks(ps.chunks)); err != nil {
			return err
		}
		if ps.row.Status == data.SourcePending {
			continue
		}
		typ := data.EventKnowledgeSourceIndexed
		if ps.row.Status == data.SourceFailed {
			typ = data.EventKnowledgeSourceFailed
		}
		if _, err := db.recordEvent(ctx, tx, typ, kb.WorkspaceID, map[string]any{
			"knowledge_base_id": kb.ID, "source_type": ps.row.Type, "source": ps.row.Item(),
		}); err != nil {
			return err
		}
	}
	return nil
}

func sourceChunks(chunks []knowledge.Chunk) []data.SourceChunk {
	out := make([]data.SourceChunk, len(chunks))
	for i, c := range chunks {
		out[i] = data.SourceChunk{Text: c.Text, Vector: c.Vector}
	}
	return out
}
