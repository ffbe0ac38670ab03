package bolt

// Chunks are persisted in bucketKBChunks, the source of truth; retrieval runs on an
// in-memory knowledge.Index per knowledge base, built from them on the first query and
// kept in step by every commit that adds or removes chunks.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/validate"
)

func chunkID(sourceID string, seq int) string { return fmt.Sprintf("%s:%d", sourceID, seq) }

func chunkPrefix(kbID, sourceID string) []byte {
	return append(indexKey(kbID, sourceID), 0)
}

// encodeChunk packs a chunk as uvarint(len(text)) text, then its vector as little-endian
// float32s: a third of the size of JSON numbers, and no parsing on an index build.
func encodeChunk(c knowledge.Chunk) []byte {
	buf := make([]byte, 0, binary.MaxVarintLen64+len(c.Text)+4*len(c.Vector))
	buf = binary.AppendUvarint(buf, uint64(len(c.Text)))
	buf = append(buf, c.Text...)
	for _, f := range c.Vector {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
	}
	return buf
}

func decodeChunk(v []byte) (text string, vec []float32, err error) {
	n, k := binary.Uvarint(v)
	if k <= 0 || uint64(len(v)-k) < n || (uint64(len(v)-k)-n)%4 != 0 {
		return "", nil, errors.New("malformed chunk")
	}
	text = string(v[k : k+int(n)])
	rest := v[k+int(n):]
	if len(rest) > 0 {
		vec = make([]float32, len(rest)/4)
		for i := range vec {
			vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
		}
	}
	return text, vec, nil
}

// putChunks stores the chunks of one source.
func putChunks(tx *bbolt.Tx, kbID, sourceID string, chunks []knowledge.Chunk) error {
	b := tx.Bucket(bucketKBChunks)
	for i, c := range chunks {
		key := append(chunkPrefix(kbID, sourceID), fmt.Sprintf("%06d", i)...)
		if err := b.Put(key, encodeChunk(c)); err != nil {
			return err
		}
	}
	return nil
}

// embedChunks sets each chunk's vector when an embedder is configured. A failing endpoint
// leaves the chunks without vectors: they are still found lexically, which beats refusing
// the source over an optional feature.
func (db *DB) embedChunks(ctx context.Context, chunks []knowledge.Chunk) {
	e := db.opts.Knowledge.Embedder
	if e == nil || len(chunks) == 0 {
		return
	}
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	vecs, err := e.Embed(context.WithoutCancel(ctx), texts)
	if err != nil || len(vecs) != len(chunks) {
		db.log.Warn("embedding chunks failed; they are indexed lexically only", "error", err)
		return
	}
	for i := range chunks {
		chunks[i].Vector = vecs[i]
	}
}

// indexCache holds the built indexes. gen counts the changes of each knowledge base: a
// build that saw an older generation is used once but not kept, since a commit may have
// landed between its read and its install.
type indexCache struct {
	mu  sync.Mutex
	ix  map[string]*knowledge.Index
	gen map[string]uint64
}

func newIndexCache() *indexCache {
	return &indexCache{ix: map[string]*knowledge.Index{}, gen: map[string]uint64{}}
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
}

// kbIndex returns the index of kbID, building it from the stored chunks when needed.
func (db *DB) kbIndex(kbID string) (*knowledge.Index, error) {
	c := db.kbIndexes
	c.mu.Lock()
	ix, gen := c.ix[kbID], c.gen[kbID]
	c.mu.Unlock()
	if ix != nil {
		return ix, nil
	}
	ix = knowledge.NewIndex()
	err := db.view(func(tx *bbolt.Tx) error {
		prefix := indexKey(kbID, "")
		cur := tx.Bucket(bucketKBChunks).Cursor()
		var source string
		var chunks []knowledge.Chunk
		flush := func() {
			if len(chunks) > 0 {
				ix.Add(source, chunks)
			}
			chunks = nil
		}
		for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
			rest := k[len(prefix):]
			i := bytes.IndexByte(rest, 0)
			if i < 0 {
				continue
			}
			src := string(rest[:i])
			if src != source {
				flush()
				source = src
			}
			text, vec, err := decodeChunk(v)
			if err != nil {
				return fmt.Errorf("chunk %q: %w", k, err)
			}
			seq := 0
			fmt.Sscanf(string(rest[i+1:]), "%d", &seq)
			chunks = append(chunks, knowledge.Chunk{ID: chunkID(src, seq), SourceID: src, Text: text, Vector: vec})
		}
		flush()
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen[kbID] == gen && c.ix[kbID] == nil {
		c.ix[kbID] = ix
	}
	c.mu.Unlock()
	return ix, nil
}

// search runs one query over the given knowledge bases and returns the best k hits over
// all of them, best first, ties by chunk id.
func (db *DB) search(ctx context.Context, kbIDs []string, query string, k int, threshold float64) ([]data.KnowledgeChunk, error) {
	var vec []float32
	if e := db.opts.Knowledge.Embedder; e != nil {
		vecs, err := e.Embed(ctx, []string{query})
		if err == nil && len(vecs) == 1 {
			vec = vecs[0]
		} else {
			db.log.Warn("embedding a query failed; searching lexically", "error", err)
		}
	}
	var hits []knowledge.Hit
	owner := map[string]string{} // source id → knowledge base id
	for _, id := range kbIDs {
		ix, err := db.kbIndex(id)
		if err != nil {
			return nil, err
		}
		var found []knowledge.Hit
		if vec != nil {
			found = ix.SearchHybrid(query, vec, k, threshold, knowledge.DefaultVectorWeight)
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
	err := db.view(func(tx *bbolt.Tx) error {
		for _, h := range hits {
			if len(out) == k {
				break
			}
			var src sourceRow
			found, err := getJSON(tx.Bucket(bucketKBSources), sourceKey(owner[h.SourceID], h.SourceID), &src)
			if err != nil {
				return err
			}
			if !found {
				continue // deleted since the search: never return a chunk of a gone source
			}
			score := math.Min(1, math.Max(0, h.Score))
			out = append(out, data.KnowledgeChunk{ChunkID: h.ChunkID, SourceID: h.SourceID, SourceType: src.Type, Text: h.Text, Score: score})
		}
		return nil
	})
	return out, err
}

// QueryKnowledgeBase implements data.KnowledgeBaseService.
func (db *DB) QueryKnowledgeBase(ctx context.Context, kbID string, q data.KnowledgeQuery) ([]data.KnowledgeChunk, error) {
	if err := validate.KnowledgeQuery(q); err != nil {
		return nil, err
	}
	if err := db.view(func(tx *bbolt.Tx) error { _, err := loadKB(ctx, tx, kbID); return err }); err != nil {
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
	return db.search(ctx, []string{kbID}, q.Query, k, threshold)
}

// QueryAgentKnowledge implements data.KnowledgeBaseService. The agent row is read as JSON
// for the two groups retrieval needs, so this file depends on nothing else of agents.
func (db *DB) QueryAgentKnowledge(ctx context.Context, agentID string, q data.AgentKnowledgeQuery) ([]data.KnowledgeChunk, error) {
	if err := validate.AgentKnowledgeQuery(q); err != nil {
		return nil, err
	}
	p := data.PrincipalFrom(ctx)
	var agent struct {
		WorkspaceID         string                   `json:"workspace_id"`
		KnowledgeBaseConfig data.KnowledgeBaseConfig `json:"knowledge_base_config"`
		LLMConfig           struct {
			KnowledgeBaseIDs []string `json:"knowledge_base_ids"`
		} `json:"llm_config"`
	}
	var kbIDs []string
	err := db.view(func(tx *bbolt.Tx) error {
		raw := tx.Bucket(bucketAgents).Get([]byte(agentID))
		if raw == nil || p == nil || !p.CanSeeAgent(agentID) {
			return data.NotFound("Agent")
		}
		if err := json.Unmarshal(raw, &agent); err != nil {
			return fmt.Errorf("decoding agent %s: %w", agentID, err)
		}
		if agent.WorkspaceID != p.WorkspaceID {
			return data.NotFound("Agent")
		}
		for _, id := range agent.LLMConfig.KnowledgeBaseIDs {
			if knowledgeBaseInWorkspace(tx, p.WorkspaceID, id) {
				kbIDs = append(kbIDs, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cfg := agent.KnowledgeBaseConfig
	k := cfg.ChunksToRetrieve
	if k < 1 {
		k = data.DefaultChunksToRetrieve
	}
	threshold := 0.0
	if cfg.SimilarityThreshold != nil {
		threshold = *cfg.SimilarityThreshold
	}
	return db.search(ctx, kbIDs, q.Query, k, threshold)
}
