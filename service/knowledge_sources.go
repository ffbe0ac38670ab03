package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/validate"
)

// preparedSource is a source made ready outside any transaction: extraction, chunking and
// embedding are slow, and a write transaction blocks every other writer.
type preparedSource struct {
	src     data.KnowledgeSource
	chunks  []knowledge.Chunk
	content []byte // a file's bytes, stored before the metadata commits
}

// prepareSources assigns ids and extracts, chunks and embeds texts and files; kinds are
// the detected formats of in.Files. URLs are left pending.
func (s *KnowledgeBaseService) prepareSources(ctx context.Context, kb *data.KnowledgeBase, in data.SourcesAdd, kinds []knowledge.Kind) []*preparedSource {
	now := s.timeNow()
	newSource := func(typ string) data.KnowledgeSource {
		return data.KnowledgeSource{ID: s.ids.New(data.PrefixSource), Type: typ, KnowledgeBaseID: kb.ID, WorkspaceID: kb.WorkspaceID, CreatedAt: now}
	}
	var out []*preparedSource
	for i, f := range in.Files {
		ps := &preparedSource{src: newSource(data.SourceFiles), content: f.Content}
		ps.src.Filename = knowledge.SanitizeFilename(f.Filename)
		ps.src.ContentType = knowledge.ContentType(kinds[i])
		ps.src.SizeBytes = int64(len(f.Content))
		sum := sha256.Sum256(f.Content)
		ps.src.SHA256 = hex.EncodeToString(sum[:])
		text, err := knowledge.Extract(kinds[i], f.Content)
		s.index(ctx, &ps.src, &ps.chunks, text, err)
		out = append(out, ps)
	}
	for _, t := range in.Texts {
		ps := &preparedSource{src: newSource(data.SourceTexts)}
		ps.src.Title, ps.src.Content = t.Title, t.Content
		s.index(ctx, &ps.src, &ps.chunks, t.Content, nil)
		out = append(out, ps)
	}
	for _, u := range in.URLs {
		ps := &preparedSource{src: newSource(data.SourceURLs)}
		ps.src.URL, ps.src.Status, ps.src.Attempt = u, data.SourcePending, 1
		out = append(out, ps)
	}
	return out
}

// index chunks and embeds a source's extracted text into chunks and marks src indexed,
// or marks it failed with the reason (extractErr, or no text to index).
func (s *KnowledgeBaseService) index(ctx context.Context, src *data.KnowledgeSource, chunks *[]knowledge.Chunk, text string, extractErr error) {
	err := extractErr
	if err == nil {
		*chunks, err = knowledge.ChunkSource(src.ID, text)
	}
	for i := range *chunks {
		(*chunks)[i].Title = src.Heading()
	}
	if err != nil {
		reason := knowledge.Reason(err)
		src.Status, src.Error, src.IndexedAt, *chunks = data.SourceFailed, &reason, nil, nil
		return
	}
	// Vectors come later, from the knowledge base's embed job (recordSourceEvent queues it).
	src.Status, src.Error, src.IndexedAt = data.SourceIndexed, nil, s.timeNow().Ptr()
}

// storeSources writes prepared sources, their chunks and events in tx, and brings the
// cached index in step once tx commits.
func (s *KnowledgeBaseService) storeSources(ctx context.Context, tx Tx, kb *data.KnowledgeBase, prepared []*preparedSource) error {
	for _, ps := range prepared {
		if err := tx.PutKnowledgeSource(&ps.src); err != nil {
			return err
		}
		if len(ps.chunks) > 0 {
			if err := tx.PutSourceChunks(kb.ID, ps.src.ID, toStored(ps.chunks)); err != nil {
				return err
			}
		}
		if ps.src.Status == data.SourcePending {
			if err := s.enqueueURLFetch(tx, &ps.src); err != nil {
				return err
			}
			continue
		}
		if err := s.recordSourceEvent(ctx, tx, &ps.src); err != nil {
			return err
		}
	}
	tx.OnCommit(func() {
		for _, ps := range prepared {
			if len(ps.chunks) > 0 {
				s.kbIndexes.apply(kb.ID, func(ix *knowledge.Index) { ix.Add(ps.src.ID, ps.chunks) })
			}
		}
	})
	return nil
}

// toStored is chunks as storage keeps them.
func toStored(chunks []knowledge.Chunk) []data.SourceChunk {
	out := make([]data.SourceChunk, len(chunks))
	for i, c := range chunks {
		out[i] = data.SourceChunk{Text: c.Text, Vector: c.Vector}
	}
	return out
}

// recordSourceEvent records knowledge_base.source_indexed or source_failed, in the
// transaction that stored the source's new chunks. Those have no vectors yet: the source
// loses its embedding space, and an indexed one queues the knowledge base's embed job.
func (s *KnowledgeBaseService) recordSourceEvent(ctx context.Context, tx Tx, src *data.KnowledgeSource) error {
	if src.EmbeddingSpace != "" {
		src.EmbeddingSpace = ""
		if err := tx.PutKnowledgeSource(src); err != nil {
			return err
		}
	}
	typ := data.EventKnowledgeSourceIndexed
	if src.Status == data.SourceFailed {
		typ = data.EventKnowledgeSourceFailed
	} else if err := s.enqueueEmbed(tx, src.WorkspaceID, src.KnowledgeBaseID); err != nil {
		return err
	}
	_, err := s.record(ctx, tx, typ, src.WorkspaceID, map[string]any{
		"knowledge_base_id": src.KnowledgeBaseID, "source_type": src.Type, "source": src.Item(),
	})
	return err
}

// sourcesField names the member a per-knowledge-base limit error is reported under: the
// first kind of source the request adds.
func sourcesField(in data.SourcesAdd) string {
	switch {
	case len(in.Files) > 0:
		return "files"
	case len(in.Texts) > 0:
		return "texts"
	}
	return "urls"
}

func tooManySources(field string, max, have, adding int) error {
	return data.FieldError(field, fmt.Sprintf("A knowledge base holds at most %d sources; it has %d and this request adds %d.", max, have, adding))
}

// checkSourceRoom refuses an add that would pass the per-knowledge-base limit.
func (s *KnowledgeBaseService) checkSourceRoom(tx Tx, kbID string, in data.SourcesAdd) error {
	have, err := tx.CountKnowledgeSources(kbID)
	if err != nil {
		return err
	}
	adding, max := len(in.Files)+len(in.Texts)+len(in.URLs), s.opts.Knowledge.SourceLimit()
	if have+adding > max {
		return tooManySources(sourcesField(in), max, have, adding)
	}
	return nil
}

// checkSources validates an add, the files' formats and the request's decoding faults
// included, every fault in one error, and returns the files' detected formats.
func (s *KnowledgeBaseService) checkSources(ctx context.Context, in data.SourcesAdd) ([]knowledge.Kind, error) {
	var errs validate.Errors
	kinds := make([]knowledge.Kind, len(in.Files))
	for i, f := range in.Files {
		if len(f.Content) == 0 {
			continue // SourcesAdd reports it
		}
		kind, err := knowledge.Detect(f.Filename, f.Content)
		if err != nil {
			p := validate.Index("files", i)
			errs.Addf(p, "The %s file (%s) is not accepted: %s.", p, knowledge.SanitizeFilename(f.Filename), knowledge.Unsupported(err))
		}
		kinds[i] = kind
	}
	return kinds, checkInput(ctx, validate.Combine(validate.SourcesAdd(in, s.checkURL()), errs.Err()))
}

// AddSources implements data.KnowledgeBaseService. Nothing is stored unless every source
// is acceptable; files are stored durably before their rows commit, and discarded again
// if the commit fails.
func (s *KnowledgeBaseService) AddSources(ctx context.Context, kbID string, in data.SourcesAdd) (*data.KnowledgeBase, error) {
	kinds, err := s.checkSources(ctx, in)
	if err != nil {
		return nil, err
	}
	// Refuse early what the transaction would refuse, before the slow work.
	var kb *data.KnowledgeBase
	err = s.store.View(ctx, func(tx Tx) error {
		if kb, err = loadKB(ctx, tx, kbID); err != nil {
			return err
		}
		if err := checkKnowledgeBaseWritable(ctx, tx, kb); err != nil {
			return err
		}
		return s.checkSourceRoom(tx, kbID, in)
	})
	if err != nil {
		return nil, err
	}
	prepared := s.prepareSources(ctx, kb, in, kinds)
	var files []string
	discard := func() {
		if err := s.store.DiscardSourceFiles(context.WithoutCancel(ctx), kb.WorkspaceID, kbID, files); err != nil {
			s.log.Warn("removing the files of sources that were not stored", "knowledge_base_id", kbID, "error", err)
		}
	}
	for _, ps := range prepared {
		if ps.src.Type != data.SourceFiles {
			continue
		}
		files = append(files, ps.src.ID) // a failed put may leave a part to discard
		if err := s.store.PutSourceFile(ctx, kb.WorkspaceID, kbID, ps.src.ID, bytes.NewReader(ps.content)); err != nil {
			discard()
			return nil, fmt.Errorf("storing %s: %w", ps.src.Filename, err)
		}
	}
	var out *data.KnowledgeBase
	err = s.store.Update(ctx, func(tx Tx) error {
		kb, err := loadKB(ctx, tx, kbID)
		if err != nil {
			return err
		}
		if err := checkKnowledgeBaseWritable(ctx, tx, kb); err != nil {
			return err
		}
		if err := s.checkSourceRoom(tx, kbID, in); err != nil {
			return err
		}
		if err := s.storeSources(ctx, tx, kb, prepared); err != nil {
			return err
		}
		kb.UpdatedAt = s.timeNow()
		if err := tx.PutKnowledgeBase(kb); err != nil {
			return err
		}
		out = kb
		if err := tx.KnowledgeBaseSources(kb); err != nil {
			return err
		}
		if err := s.fillEmbeddings(tx, kb); err != nil {
			return err
		}
		changedKnowledgeBaseAccess(ctx, kb)
		answerClaim(ctx, kb, data.AccessAnswer(kb.Access))
		return nil
	})
	if err != nil {
		discard() // the rows never committed: no file may outlive them
		return nil, err
	}
	return out, nil
}

// loadSource reads a source of kbID of the given type; anything else is not found.
func loadSource(tx Tx, kbID, typ, id string) (*data.KnowledgeSource, error) {
	src, err := tx.KnowledgeSource(kbID, id)
	if err != nil {
		return nil, err
	}
	if src == nil || src.Type != typ {
		return nil, data.NotFound("Source")
	}
	return src, nil
}

// DeleteSource implements data.KnowledgeBaseService.
func (s *KnowledgeBaseService) DeleteSource(ctx context.Context, kbID, sourceType, sourceID string) (*data.KnowledgeBase, error) {
	if err := validate.SourceType(sourceType); err != nil {
		return nil, err
	}
	var out *data.KnowledgeBase
	err := s.store.Update(ctx, func(tx Tx) error {
		kb, err := s.loadKBForChange(ctx, tx, kbID)
		if err != nil {
			return err
		}
		src, err := loadSource(tx, kbID, sourceType, sourceID)
		if err != nil {
			return err
		}
		if err := tx.DeleteKnowledgeSource(src); err != nil {
			return err
		}
		kb.UpdatedAt = s.timeNow()
		if err := tx.PutKnowledgeBase(kb); err != nil {
			return err
		}
		if err := tx.KnowledgeBaseSources(kb); err != nil {
			return err
		}
		if err := s.fillEmbeddings(tx, kb); err != nil {
			return err
		}
		changedKnowledgeBaseAccess(ctx, kb)
		out = kb
		tx.OnCommit(func() { s.kbIndexes.apply(kbID, func(ix *knowledge.Index) { ix.Remove(sourceID) }) })
		_, err = s.record(ctx, tx, data.EventKnowledgeBaseUpdated, kb.WorkspaceID, kb)
		return err
	})
	return out, err
}

// RefetchURL implements data.KnowledgeBaseService. The source keeps its chunks until the
// new fetch completes, so retrieval does not go blank meanwhile.
func (s *KnowledgeBaseService) RefetchURL(ctx context.Context, kbID, sourceID string) (*data.KnowledgeBase, error) {
	var out *data.KnowledgeBase
	err := s.store.Update(ctx, func(tx Tx) error {
		kb, err := loadKB(ctx, tx, kbID)
		if err != nil {
			return err
		}
		if err := checkKnowledgeBaseWritable(ctx, tx, kb); err != nil {
			return err
		}
		src, err := loadSource(tx, kbID, data.SourceURLs, sourceID)
		if err != nil {
			return err
		}
		src.Attempt++
		src.Status, src.Error = data.SourcePending, nil
		if err := tx.PutKnowledgeSource(src); err != nil {
			return err
		}
		if err := s.enqueueURLFetch(tx, src); err != nil {
			return err
		}
		kb.UpdatedAt = s.timeNow()
		if err := tx.PutKnowledgeBase(kb); err != nil {
			return err
		}
		out = kb
		if err := tx.KnowledgeBaseSources(kb); err != nil {
			return err
		}
		if err := s.fillEmbeddings(tx, kb); err != nil {
			return err
		}
		changedKnowledgeBaseAccess(ctx, kb)
		return nil
	})
	return out, err
}

// SourceFile implements data.KnowledgeBaseService.
func (s *KnowledgeBaseService) SourceFile(ctx context.Context, kbID, sourceID string) (*data.FileSource, io.ReadSeekCloser, error) {
	var item data.FileSource
	var ws string
	err := s.store.View(ctx, func(tx Tx) error {
		kb, err := loadKB(ctx, tx, kbID)
		if err != nil {
			return err
		}
		src, err := loadSource(tx, kbID, data.SourceFiles, sourceID)
		if err != nil {
			return err
		}
		item, ws = src.File(), kb.WorkspaceID
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	f, err := s.store.OpenSourceFile(ctx, ws, kbID, sourceID) // not found: deleted since the read
	if err != nil {
		return nil, nil, err
	}
	return &item, f, nil
}
