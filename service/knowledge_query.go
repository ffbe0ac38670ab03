package service

// Retrieval runs on an in-memory knowledge.Index per knowledge base, built from the
// stored chunks on the first query and kept with the chunks' revision it was built at:
// a query whose stored revision differs (a commit of this process, or of another replica
// sharing the store) builds it again.

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/validate"
)

// indexCache holds the built indexes, with the workspace of each. gen counts the changes
// of each knowledge base: a build that saw an older generation is used once but not kept,
// since a commit may have landed between its read and its install.
type indexCache struct {
	mu    sync.Mutex
	ix    map[string]*knowledge.Index
	ws    map[string]string // knowledge base id → its workspace, for the built ones
	gen   map[string]uint64
	rev   map[string]uint64 // the stored chunks revision each built index reflects
	space map[string]string // the embedding space whose vectors each built index holds
}

func newIndexCache() *indexCache {
	return &indexCache{ix: map[string]*knowledge.Index{}, ws: map[string]string{}, gen: map[string]uint64{}, rev: map[string]uint64{},
		space: map[string]string{}}
}

// apply runs fn on the cached index of kbID, if built, after a commit changed its chunks.
func (c *indexCache) apply(kbID string, fn func(*knowledge.Index)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen[kbID]++
	if ix := c.ix[kbID]; ix != nil {
		fn(ix)
	}
}

// drop forgets the index of a deleted knowledge base.
func (c *indexCache) drop(kbID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen[kbID]++
	delete(c.ix, kbID)
	delete(c.ws, kbID)
}

// dropWorkspace forgets the indexes of a deleted workspace's knowledge bases, which the
// storage deleted with it.
func (c *indexCache) dropWorkspace(workspaceID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for kbID, ws := range c.ws {
		if ws == workspaceID {
			c.gen[kbID]++
			delete(c.ix, kbID)
			delete(c.ws, kbID)
		}
	}
}

// len is the number of built indexes held.
func (c *indexCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ix)
}

// kbIndex returns the index of kbID, of workspace ws, building it from the stored chunks
// when needed, with the vectors of embedding space space only ("" for none).
func (s *KnowledgeBaseService) kbIndex(ctx context.Context, ws, kbID, space string) (*knowledge.Index, error) {
	c := s.kbIndexes
	var rev uint64
	if err := s.store.View(ctx, func(tx Tx) error {
		var err error
		rev, err = tx.ChunksRevision(kbID)
		return err
	}); err != nil {
		return nil, err
	}
	c.mu.Lock()
	ix, gen, built, builtSpace := c.ix[kbID], c.gen[kbID], c.rev[kbID], c.space[kbID]
	c.mu.Unlock()
	if ix != nil && built == rev && builtSpace == space {
		return ix, nil
	}
	ix = knowledge.NewIndex()
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if rev, err = tx.ChunksRevision(kbID); err != nil {
			return err
		}
		sources, err := tx.KnowledgeSources(kbID)
		if err != nil {
			return err
		}
		bySource := make(map[string]*data.KnowledgeSource, len(sources))
		for _, src := range sources {
			bySource[src.ID] = src
		}
		return tx.EachSourceChunks(kbID, func(sourceID string, stored []data.SourceChunk) error {
			src := bySource[sourceID]
			heading, vectors := "", false
			if src != nil {
				heading, vectors = src.Heading(), space != "" && src.EmbeddingSpace == space
			}
			chunks := make([]knowledge.Chunk, len(stored))
			for i, sc := range stored {
				chunks[i] = knowledge.Chunk{ID: knowledge.ChunkID(sourceID, i), SourceID: sourceID, Title: heading, Text: sc.Text}
				if vectors {
					chunks[i].Vector = sc.Vector // another model's vectors are not comparable
				}
			}
			ix.Add(sourceID, chunks)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen[kbID] == gen {
		c.ix[kbID], c.ws[kbID], c.rev[kbID], c.space[kbID] = ix, ws, rev, space
	}
	c.mu.Unlock()
	return ix, nil
}

// search runs one query over the given knowledge bases and returns the best k hits over
// all of them, best first, ties by chunk id.
func (s *KnowledgeBaseService) search(ctx context.Context, ws string, kbIDs []string, query string, k int, threshold float64) ([]data.KnowledgeChunk, error) {
	var p *embedProvider
	fusion := knowledge.DefaultFusion
	err := s.store.View(ctx, func(tx Tx) error {
		w, err := tx.Workspace(ws)
		if err != nil {
			return err
		}
		fusion = workspaceFusion(w)
		p, err = s.providerFor(w)
		return err
	})
	if err != nil {
		return nil, err
	}
	vec, space := s.embedQuery(ctx, p, query)
	if vec != nil {
		s.resumeEmbeddings(ctx, ws, kbIDs)
	}
	var hits []knowledge.Hit
	owner := map[string]string{} // source id → knowledge base id
	for _, id := range kbIDs {
		ix, err := s.kbIndex(ctx, ws, id, space)
		if err != nil {
			return nil, err
		}
		var found []knowledge.Hit
		if vec != nil {
			found = ix.SearchHybrid(query, vec, k, threshold, fusion)
		} else {
			found = ix.Search(query, k, threshold)
		}
		for _, h := range found {
			owner[h.SourceID] = id
		}
		hits = append(hits, found...)
	}
	slices.SortStableFunc(hits, func(a, b knowledge.Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ChunkID, b.ChunkID)
	})
	out := make([]data.KnowledgeChunk, 0, min(k, len(hits)))
	err = s.store.View(ctx, func(tx Tx) error {
		for _, h := range hits {
			if len(out) == k {
				break
			}
			src, err := tx.KnowledgeSource(owner[h.SourceID], h.SourceID)
			if err != nil {
				return err
			}
			if src == nil {
				continue // deleted since the search: never return a chunk of a gone source
			}
			score := math.Min(1, math.Max(0, h.Score))
			out = append(out, data.KnowledgeChunk{ChunkID: h.ChunkID, SourceID: h.SourceID, SourceType: src.Type, Text: h.Text, Score: score, Evidence: string(h.Evidence)})
		}
		return nil
	})
	return out, err
}

// QueryKnowledgeBase implements data.KnowledgeBaseService.
func (s *KnowledgeBaseService) QueryKnowledgeBase(ctx context.Context, kbID string, q data.KnowledgeQuery) ([]data.KnowledgeChunk, error) {
	if err := checkInput(ctx, validate.KnowledgeQuery(q)); err != nil {
		return nil, err
	}
	var kb *data.KnowledgeBase
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		kb, err = loadKB(ctx, tx, kbID)
		return err
	})
	if err != nil {
		return nil, err
	}
	k := data.DefaultChunksToRetrieve
	if q.ChunksToRetrieve != nil {
		k = *q.ChunksToRetrieve
	}
	threshold := 0.0
	if q.SimilarityThreshold != nil {
		threshold = *q.SimilarityThreshold
	}
	return s.search(ctx, kb.WorkspaceID, []string{kbID}, q.Query, k, threshold)
}

// queriedKnowledge returns the knowledge settings and knowledge_base_ids an agent's query
// searches with: the agent's own (the agent of the caller's workspace and within its
// agent_ids), or those of the published version named.
func (s *KnowledgeBaseService) queriedKnowledge(tx Tx, p *data.Principal, agentID string, version *int) (data.KnowledgeBaseConfig, []string, error) {
	if p == nil || !visibilityOf(p).agent(agentID) {
		return data.KnowledgeBaseConfig{}, nil, data.NotFound("Agent")
	}
	agent, err := tx.Agent(agentID)
	if err != nil {
		return data.KnowledgeBaseConfig{}, nil, err
	}
	if agent == nil || agent.WorkspaceID != p.WorkspaceID {
		return data.KnowledgeBaseConfig{}, nil, data.NotFound("Agent")
	}
	if version == nil {
		return agent.KnowledgeBaseConfig, agent.LLMConfig.KnowledgeBaseIDs, nil
	}
	if agent.PublishedVersion != nil && *agent.PublishedVersion == *version {
		// The live version cannot be deleted: the cache (another replica's too) holds it right.
		v, err := s.versions.get(tx, agentID, *version)
		if err != nil {
			return data.KnowledgeBaseConfig{}, nil, err
		}
		return v.cfg.KnowledgeBaseConfig, v.cfg.LLMConfig.KnowledgeBaseIDs, nil
	}
	// Any other may have been deleted on another replica, whose cache this one's is not.
	v, err := tx.AgentVersion(agentID, *version)
	if err != nil {
		return data.KnowledgeBaseConfig{}, nil, err
	}
	if v == nil {
		return data.KnowledgeBaseConfig{}, nil, unknownVersion("agent_version", *version)
	}
	return v.KnowledgeBaseConfig, v.LLMConfig.KnowledgeBaseIDs, nil
}

// QueryAgentKnowledge implements data.KnowledgeBaseService: the agent must be of the
// caller's workspace and within its agent_ids; its knowledge_base_ids that no longer name
// a knowledge base of the workspace are skipped.
func (s *KnowledgeBaseService) QueryAgentKnowledge(ctx context.Context, agentID string, q data.AgentKnowledgeQuery) ([]data.KnowledgeChunk, error) {
	p := data.PrincipalFrom(ctx)
	refs := func(tx Tx) error {
		_, _, err := s.queriedKnowledge(tx, p, agentID, q.AgentVersion)
		return err
	}
	if err := s.checkInputAndRefs(ctx, validate.AgentKnowledgeQuery(q), refs); err != nil {
		return nil, err
	}
	var cfg data.KnowledgeBaseConfig
	var kbIDs []string
	err := s.store.View(ctx, func(tx Tx) error {
		var ids []string
		var err error
		if cfg, ids, err = s.queriedKnowledge(tx, p, agentID, q.AgentVersion); err != nil {
			return err
		}
		for _, id := range ids {
			kb, err := tx.KnowledgeBase(id)
			if err != nil {
				return err
			}
			if kb != nil && kb.WorkspaceID == p.WorkspaceID {
				kbIDs = append(kbIDs, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	k := cfg.ChunksToRetrieve
	if k < 1 {
		k = data.DefaultChunksToRetrieve
	}
	threshold := 0.0
	if cfg.SimilarityThreshold != nil {
		threshold = *cfg.SimilarityThreshold
	}
	return s.search(ctx, p.WorkspaceID, kbIDs, q.Query, k, threshold)
}
