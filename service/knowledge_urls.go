package service

import (
	"context"
	"errors"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
)

// PendingURLs implements data.KnowledgeBaseService: every url source waiting for a fetch.
// The fetcher calls it on start, so a restart resumes.
func (s *KnowledgeBaseService) PendingURLs(ctx context.Context) ([]data.URLFetch, error) {
	var out []data.URLFetch
	err := s.store.View(ctx, func(tx Tx) error {
		pending, err := tx.PendingURLSources()
		for _, src := range pending {
			out = append(out, data.URLFetch{KnowledgeBaseID: src.KnowledgeBaseID, SourceID: src.ID, URL: src.URL, Attempt: src.Attempt})
		}
		return err
	})
	return out, err
}

// stillPending returns the source of job when job is still its current request.
func stillPending(tx Tx, job data.URLFetch) (*data.KnowledgeSource, error) {
	src, err := tx.KnowledgeSource(job.KnowledgeBaseID, job.SourceID)
	if err != nil || src == nil {
		return nil, err
	}
	if src.Type != data.SourceURLs || src.Status != data.SourcePending || src.Attempt != job.Attempt {
		return nil, nil
	}
	return src, nil
}

// CompleteURL implements data.KnowledgeBaseService: the fetched body is extracted, chunked
// and embedded outside the transaction; a result for a source deleted or refetched
// meanwhile is dropped.
func (s *KnowledgeBaseService) CompleteURL(ctx context.Context, job data.URLFetch, got data.FetchedURL) error {
	var current *data.KnowledgeSource
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		current, err = stillPending(tx, job)
		return err
	})
	if err != nil || current == nil {
		return err
	}
	text, extractErr := "", got.Err
	if extractErr == nil {
		text, extractErr = knowledge.ExtractFetched(job.URL, got.ContentType, got.Body)
	}
	result := *current
	var chunks []knowledge.Chunk
	s.index(ctx, &result, &chunks, text, extractErr)
	return s.store.Update(ctx, func(tx Tx) error {
		src, err := stillPending(tx, job)
		if err != nil || src == nil {
			return err // deleted or refetched meanwhile: this result is stale
		}
		src.Status, src.Error, src.IndexedAt = result.Status, result.Error, result.IndexedAt
		if err := tx.PutKnowledgeSource(src); err != nil {
			return err
		}
		if err := tx.PutSourceChunks(job.KnowledgeBaseID, job.SourceID, toStored(chunks)); err != nil {
			return err
		}
		kb, err := tx.KnowledgeBase(job.KnowledgeBaseID)
		if err != nil {
			return err
		}
		if kb == nil {
			return errors.New("url source without its knowledge base")
		}
		kb.UpdatedAt = s.timeNow()
		if err := tx.PutKnowledgeBase(kb); err != nil {
			return err
		}
		tx.OnCommit(func() {
			s.kbIndexes.apply(kb.ID, func(ix *knowledge.Index) {
				if len(chunks) == 0 {
					ix.Remove(job.SourceID)
				} else {
					ix.Add(job.SourceID, chunks)
				}
			})
		})
		return s.recordSourceEvent(ctx, tx, src)
	})
}
