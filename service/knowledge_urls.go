package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
)

// JobKindFetchURL is the job that fetches a url source and indexes what it got: one per
// fetch request (a source's attempt), enqueued with the source (added, refetched or
// imported) in one transaction.
const JobKindFetchURL = "knowledge_base.fetch_url"

// urlFetchAttempts bounds a fetch job's runs. A fetch that fails (a refused address, a
// 404, a timeout) is not retried: its reason becomes the source's error at once, as the
// user can refetch. What is retried is failing to reach storage.
const urlFetchAttempts = 5

// urlFetchPayload names the fetch request a job carries out.
type urlFetchPayload struct {
	KnowledgeBaseID string `json:"knowledge_base_id"`
	SourceID        string `json:"source_id"`
	Attempt         int    `json:"attempt"`
}

// urlFetchKind is the job kind of url fetches, run by s.
func (s *KnowledgeBaseService) urlFetchKind() JobKind {
	return JobKind{Name: JobKindFetchURL, Module: data.ModuleKnowledgeBase, MaxAttempts: urlFetchAttempts,
		Handle: s.runURLFetch, AtStart: s.enqueuePendingURLFetches}
}

// fetcherBox holds the url fetcher (an interface) for an atomic pointer.
type fetcherBox struct{ f data.URLFetcher }

// UseURLFetcher implements data.KnowledgeBaseService.
func (s *KnowledgeBaseService) UseURLFetcher(f data.URLFetcher) { s.fetcher.Store(&fetcherBox{f}) }

// enqueueURLFetch queues, in tx, the job that fetches pending url source src for its
// current attempt; a second enqueue of the same request is the same job.
func (b *base) enqueueURLFetch(tx Tx, src *data.KnowledgeSource) error {
	payload, err := json.Marshal(urlFetchPayload{KnowledgeBaseID: src.KnowledgeBaseID, SourceID: src.ID, Attempt: src.Attempt})
	if err != nil {
		return err
	}
	_, err = b.enqueueJob(tx, data.JobEnqueue{WorkspaceID: src.WorkspaceID, Kind: JobKindFetchURL, Payload: payload,
		UniqueKey: fmt.Sprintf("%s/%d", src.ID, src.Attempt)})
	return err
}

// enqueuePendingURLFetches gives every pending url source a fetch job: the sources of a
// database written before fetches were jobs, or restored from a backup taken then. Those
// with a pending job keep it (the unique key).
func (s *KnowledgeBaseService) enqueuePendingURLFetches(ctx context.Context) error {
	return s.store.Update(ctx, func(tx Tx) error {
		pending, err := tx.PendingURLSources()
		if err != nil {
			return err
		}
		for _, src := range pending {
			if err := s.enqueueURLFetch(tx, src); err != nil {
				return err
			}
		}
		return nil
	})
}

// runURLFetch is the handler of JobKindFetchURL. Run again after a crash, it finds the
// source no longer pending for its attempt (the result committed) and does nothing.
func (s *KnowledgeBaseService) runURLFetch(ctx context.Context, run *JobRun) error {
	var p urlFetchPayload
	if err := json.Unmarshal(run.Job.Payload, &p); err != nil {
		return fmt.Errorf("the job's payload: %w", err)
	}
	job := data.URLFetch{KnowledgeBaseID: p.KnowledgeBaseID, SourceID: p.SourceID, Attempt: p.Attempt}
	var src *data.KnowledgeSource
	if err := s.store.View(ctx, func(tx Tx) (err error) {
		src, err = stillPending(tx, job)
		return err
	}); err != nil {
		return err
	}
	if src == nil {
		return nil // fetched already, refetched or deleted meanwhile: nothing to do
	}
	box := s.fetcher.Load()
	if box == nil {
		return Transient(errors.New("this server has no url fetcher yet"))
	}
	job.URL = src.URL
	got := box.f.Fetch(ctx, src.URL)
	if ctx.Err() != nil {
		return ctx.Err() // stopping, or the job is no longer ours: the source stays pending
	}
	return s.CompleteURL(ctx, job, got)
}

// PendingURLs implements data.KnowledgeBaseService: every url source waiting for a fetch.
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
