package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
)

// JobKindEmbed is the job that gives a knowledge base's sources vectors of its workspace's
// current embedding provider: one pending per knowledge base, enqueued when a source is
// indexed and when the workspace's provider or model changes.
const JobKindEmbed = "knowledge_base.embed"

// Retries of an embed job: a provider that is down is tried again for about a day
// (backoff doubling from 10 s to 30 min), then the job fails and the knowledge base shows
// why; the next source indexed, setting changed or query answered while the provider is
// back queues it again.
const (
	embedAttempts   = 60
	embedBackoffMax = 30 * time.Minute
)

type embedPayload struct {
	KnowledgeBaseID string `json:"knowledge_base_id"`
}

// embedKind is the job kind of embeddings, run by s.
func (s *KnowledgeBaseService) embedKind() JobKind {
	return JobKind{Name: JobKindEmbed, Module: data.ModuleKnowledgeBase, MaxAttempts: embedAttempts,
		Backoff: ExponentialBackoff(DefaultJobBackoffBase, embedBackoffMax), Handle: s.runEmbed, AtStart: s.enqueueStaleEmbeds,
		Again: s.embedAgain}
}

// embedAgain reports, as an embed job ends, whether its knowledge base has sources
// without vectors of the workspace's provider: indexed (or the provider changed) after
// the job's last look, their enqueue found the job pending and queued nothing.
func (s *KnowledgeBaseService) embedAgain(tx Tx, j *data.JobRecord) (bool, error) {
	var pl embedPayload
	if err := json.Unmarshal(j.Payload, &pl); err != nil {
		return false, nil // the run failed on it already
	}
	kb, err := tx.KnowledgeBase(pl.KnowledgeBaseID)
	if err != nil || kb == nil {
		return false, err
	}
	p, err := s.workspaceProvider(tx, kb.WorkspaceID)
	if err != nil || p == nil {
		return false, err
	}
	stale, _, err := staleSources(tx, kb.ID, p.space)
	return len(stale) > 0, err
}

// enqueueStaleEmbeds queues the embed job of every knowledge base with sources lacking
// vectors of its workspace's provider: those a version before embeddings were jobs
// indexed, and those of a provider the operator changed (--embeddings-url or -model) while
// the server was stopped. Knowledge bases with a pending job keep it (the unique key).
func (s *KnowledgeBaseService) enqueueStaleEmbeds(ctx context.Context) error {
	return s.store.Update(ctx, func(tx Tx) error {
		workspaces, err := tx.AllWorkspaces()
		if err != nil {
			return err
		}
		for _, w := range workspaces {
			p, err := s.providerFor(w)
			if err != nil || p == nil {
				if err != nil {
					s.log.Warn("embeddings: the workspace's provider cannot be used", "workspace_id", w.ID, "error", err)
				}
				continue
			}
			if err := s.enqueueStaleIn(tx, w.ID, p.space); err != nil {
				return err
			}
		}
		return nil
	})
}

// enqueueStaleIn queues the embed job of each knowledge base of a workspace with sources
// lacking vectors of space.
func (s *KnowledgeBaseService) enqueueStaleIn(tx Tx, wsID, space string) error {
	req := data.PageRequest{PerPage: data.MaxPerPage}
	for {
		list, page, err := tx.KnowledgeBasePage(wsID, req)
		if err != nil {
			return err
		}
		for _, kb := range list {
			stale, _, err := staleSources(tx, kb.ID, space)
			if err != nil {
				return err
			}
			if len(stale) > 0 {
				if err := s.enqueueEmbed(tx, wsID, kb.ID); err != nil {
					return err
				}
			}
		}
		if page.NextCursor == nil {
			return nil
		}
		req.Cursor = *page.NextCursor
	}
}

// enqueueEmbed queues, in tx, the embed job of knowledge base kbID when its workspace has
// a provider; a knowledge base with one pending keeps it.
func (b *base) enqueueEmbed(tx Tx, wsID, kbID string) error {
	_, err := b.enqueueEmbedJob(tx, wsID, kbID)
	return err
}

// enqueueEmbedJob is enqueueEmbed returning the job queued, or the one pending (nil
// without a provider).
func (b *base) enqueueEmbedJob(tx Tx, wsID, kbID string) (*data.JobRecord, error) {
	p, err := b.workspaceProvider(tx, wsID)
	if err != nil || p == nil {
		return nil, err
	}
	payload, err := json.Marshal(embedPayload{KnowledgeBaseID: kbID})
	if err != nil {
		return nil, err
	}
	return b.enqueueJob(tx, data.JobEnqueue{WorkspaceID: wsID, Kind: JobKindEmbed, Payload: payload, UniqueKey: kbID})
}

// enqueueWorkspaceEmbeds queues the embed job of every knowledge base of a workspace: its
// provider or model changed.
func (b *base) enqueueWorkspaceEmbeds(tx Tx, wsID string) error {
	req := data.PageRequest{PerPage: data.MaxPerPage}
	for {
		list, page, err := tx.KnowledgeBasePage(wsID, req)
		if err != nil {
			return err
		}
		for _, kb := range list {
			if err := b.enqueueEmbed(tx, wsID, kb.ID); err != nil {
				return err
			}
		}
		if page.NextCursor == nil {
			return nil
		}
		req.Cursor = *page.NextCursor
	}
}

// staleSources lists the indexed sources of kbID without vectors of space, and counts the
// indexed ones.
func staleSources(tx Tx, kbID, space string) (stale []*data.KnowledgeSource, total int, err error) {
	sources, err := tx.KnowledgeSources(kbID)
	if err != nil {
		return nil, 0, err
	}
	stale, total = staleOf(sources, space)
	return stale, total, nil
}

// staleOf is staleSources over sources already read.
func staleOf(sources []*data.KnowledgeSource, space string) (stale []*data.KnowledgeSource, total int) {
	for _, src := range sources {
		if src.Status != data.SourceIndexed && src.EmbeddingSpace == "" {
			continue
		}
		total++
		if src.EmbeddingSpace != space {
			stale = append(stale, src)
		}
	}
	return stale, total
}

// runEmbed is the handler of JobKindEmbed: source by source, it embeds the chunks of the
// sources whose vectors are not of the workspace's current provider and stores them with
// the source's new space, each source in one transaction, until none is left (sources
// indexed meanwhile included). Run again after a crash it finds the sources already done
// by their space. A provider that fails leaves the sources searchable lexically, records
// the failure on the knowledge base and retries later.
func (s *KnowledgeBaseService) runEmbed(ctx context.Context, run *JobRun) error {
	var pl embedPayload
	if err := json.Unmarshal(run.Job.Payload, &pl); err != nil {
		return fmt.Errorf("the job's payload: %w", err)
	}
	for {
		var kb *data.KnowledgeBase
		var p *embedProvider
		var stale []*data.KnowledgeSource
		var total, dim int
		err := s.store.View(ctx, func(tx Tx) error {
			var err error
			if kb, err = tx.KnowledgeBase(pl.KnowledgeBaseID); err != nil || kb == nil {
				return err
			}
			if p, err = s.workspaceProvider(tx, kb.WorkspaceID); err != nil || p == nil {
				return err
			}
			sources, err := tx.KnowledgeSources(kb.ID)
			if err != nil {
				return err
			}
			stale, total = staleOf(sources, p.space)
			dim, err = spaceDimension(tx, kb.ID, sources, p.space)
			return err
		})
		if err != nil {
			return err
		}
		if kb == nil || p == nil {
			return nil // deleted, or embeddings turned off: nothing to do
		}
		if len(stale) == 0 {
			if err := run.Progress(ctx, data.JobProgress{Done: int64(total), Total: int64(total)}, ""); err != nil {
				return err
			}
			return s.setEmbeddingError(ctx, run, kb.ID, nil)
		}
		// The sources found stale now, a group at a time; then a new look for sources
		// indexed meanwhile.
		for i := 0; i < len(stale); {
			done := int64(total - len(stale) + i)
			if err := run.Progress(ctx, data.JobProgress{Done: done, Total: int64(total)}, ""); err != nil {
				return err
			}
			n, err := s.embedGroup(ctx, p, stale[i:], &dim)
			i += n
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				reason := knowledge.Reason(err)
				if serr := s.setEmbeddingError(ctx, run, kb.ID, &reason); serr != nil {
					s.log.Warn("recording an embedding failure", "knowledge_base_id", kb.ID, "error", serr)
				}
				return err
			}
			if kb.EmbeddingError != nil {
				// The provider answers again: the knowledge base is embedding, no longer
				// failing with the last attempt's reason.
				if err := s.setEmbeddingError(ctx, run, kb.ID, nil); err != nil {
					return err
				}
				kb.EmbeddingError = nil
			}
		}
	}
}

// embedGroupChunks is about how many chunks one step of an embed job embeds and stores
// together: one request of the embedder's default batch, one transaction. Sources of one
// chunk each (texts added through the API) then cost a request and a commit per hundred,
// not per source.
const embedGroupChunks = knowledge.DefaultEmbedBatch

// embedGroup computes the vectors of the chunks of the first sources of stale, whole
// sources up to about embedGroupChunks chunks (at least one source), and stores each
// source's with the provider's space, all in one transaction; it returns how many sources
// it took. A source that changed meanwhile (deleted, its chunks replaced) is left for its
// next embedding. dim is the dimension of the knowledge base's vectors of the provider's
// space, 0 when it has none yet (the group's vectors then set it): a provider answering
// another dimension for the same model is a failure, not data.
func (s *KnowledgeBaseService) embedGroup(ctx context.Context, p *embedProvider, stale []*data.KnowledgeSource, dim *int) (int, error) {
	var chunks [][]data.SourceChunk // by source of the group
	var texts []string
	err := s.store.View(ctx, func(tx Tx) error {
		for _, src := range stale {
			if len(chunks) > 0 && len(texts) >= embedGroupChunks {
				break
			}
			cs, err := tx.SourceChunks(src.KnowledgeBaseID, src.ID)
			if err != nil {
				return err
			}
			chunks = append(chunks, cs)
			for _, c := range cs {
				texts = append(texts, c.Text)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var vecs [][]float32
	if len(texts) > 0 {
		// The provider's failures may pass (Transient); the storage faults around them
		// are judged by the runner (failureOf).
		if vecs, err = p.embedder.Embed(ctx, texts); err != nil {
			return 0, Transient(err)
		}
		if len(vecs) != len(texts) {
			return 0, Transient(fmt.Errorf("embeddings: %d vectors for %d chunks", len(vecs), len(texts)))
		}
		if *dim > 0 && len(vecs[0]) != *dim {
			return 0, Transient(fmt.Errorf("embeddings: the provider answered vectors of %d dimensions, where this knowledge base's vectors of model %s have %d", len(vecs[0]), p.model, *dim))
		}
	}
	err = s.store.Update(ctx, func(tx Tx) error {
		rest := vecs
		for i, src := range stale[:len(chunks)] {
			mine := rest[:len(chunks[i])]
			rest = rest[len(chunks[i]):]
			if err := storeSourceVectors(tx, p.space, src, chunks[i], mine); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if *dim == 0 && len(vecs) > 0 {
		*dim = len(vecs[0])
	}
	return len(chunks), nil
}

// storeSourceVectors stores the vectors of a source's chunks, as they were when embedded,
// with space, unless the source changed meanwhile or has them already.
func storeSourceVectors(tx Tx, space string, src *data.KnowledgeSource, chunks []data.SourceChunk, vecs [][]float32) error {
	cur, err := tx.KnowledgeSource(src.KnowledgeBaseID, src.ID)
	if err != nil || cur == nil || cur.EmbeddingSpace == space {
		return err
	}
	now, err := tx.SourceChunks(src.KnowledgeBaseID, src.ID)
	if err != nil {
		return err
	}
	if !slices.EqualFunc(now, chunks, func(a, b data.SourceChunk) bool { return a.Text == b.Text }) {
		return nil // re-indexed meanwhile: its vectors are for text that is gone
	}
	for i := range now {
		now[i].Vector = vecs[i]
	}
	if err := tx.PutSourceChunks(src.KnowledgeBaseID, src.ID, now); err != nil {
		return err
	}
	cur.EmbeddingSpace = space
	return tx.PutKnowledgeSource(cur)
}

// spaceDimension is the dimension of the vectors of space among sources, the knowledge
// base's, 0 when it has none yet.
func spaceDimension(tx Tx, kbID string, sources []*data.KnowledgeSource, space string) (int, error) {
	for _, src := range sources {
		if src.EmbeddingSpace != space {
			continue
		}
		chunks, err := tx.SourceChunks(kbID, src.ID)
		if err != nil {
			return 0, err
		}
		for _, c := range chunks {
			if len(c.Vector) > 0 {
				return len(c.Vector), nil
			}
		}
	}
	return 0, nil
}

// setEmbeddingError records (or clears, with nil) a knowledge base's embedding failure
// while run holds its job: a run whose lease another runner took may have been overtaken
// by that runner's success, which its failure must not overwrite. Nothing is written when
// the knowledge base already says so.
func (s *KnowledgeBaseService) setEmbeddingError(ctx context.Context, run *JobRun, kbID string, reason *string) error {
	return s.store.Update(ctx, func(tx Tx) error {
		kb, err := tx.KnowledgeBase(kbID)
		if err != nil || kb == nil {
			return err
		}
		if (kb.EmbeddingError == nil) == (reason == nil) && (reason == nil || *kb.EmbeddingError == *reason) {
			return nil
		}
		if err := run.ProgressIn(tx, run.Job.Progress, run.Job.Checkpoint); err != nil {
			return err
		}
		kb.EmbeddingError = reason
		return tx.PutKnowledgeBase(kb)
	})
}
