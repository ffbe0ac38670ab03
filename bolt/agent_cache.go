package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// agentCache keeps agents as reads return them (decoded, api_key masked), each with the
// stored bytes it was decoded from. A read takes an entry only when the row it reads in
// its own transaction has exactly those bytes, so the cache is never stale and needs no
// invalidation: a write, a restore or a delete simply makes the entry miss. Decoding a
// full agent row and unsealing its api_key was about a third of GET /agents/{id}'s CPU,
// and ten times that for a page of 100.
type agentCache struct {
	mu      sync.RWMutex
	entries map[string]agentCacheEntry
}

type agentCacheEntry struct {
	raw   []byte
	agent *data.Agent // masked; shared by readers, never modified
	json  []byte      // json.Marshal(agent): what a response sends, made once
}

// agentCacheSize bounds the cache (a full agent is a few kB, twice: raw and decoded).
const agentCacheSize = 2048

// get returns the cached entry decoded from raw, if any.
func (c *agentCache) get(id string, raw []byte) (agentCacheEntry, bool) {
	c.mu.RLock()
	e, ok := c.entries[id]
	c.mu.RUnlock()
	return e, ok && bytes.Equal(e.raw, raw)
}

// put remembers a (masked) decoded from raw; raw is copied, as bbolt's bytes are only
// valid inside the transaction.
func (c *agentCache) put(id string, raw []byte, a *data.Agent) (agentCacheEntry, error) {
	enc, err := json.Marshal(a)
	if err != nil {
		return agentCacheEntry{}, err
	}
	e := agentCacheEntry{raw: bytes.Clone(raw), agent: a, json: enc}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= agentCacheSize {
		// Dropping everything at the bound is crude but cheap, and bounds memory: a
		// workspace's hot agents are back after one read each.
		c.entries = make(map[string]agentCacheEntry, 64)
	}
	c.entries[id] = e
	return e, nil
}

// AgentJSON returns the JSON of an agent as GET /api/v1/agents/{id} sends it (masked):
// the bytes json.Marshal gives for the record Agent returns, without encoding it again
// while the stored row is unchanged. The server uses it when storage offers it.
func (db *DB) AgentJSON(ctx context.Context, id string) ([]byte, error) {
	var out []byte
	err := db.view(func(tx *bbolt.Tx) error {
		e, err := db.readAgentEntry(ctx, tx, id)
		out = e.json
		return err
	})
	return out, err
}

// ListAgentsJSON is ListAgents with each agent as JSON, as AgentJSON gives it.
func (db *DB) ListAgentsJSON(ctx context.Context, f data.AgentFilter) ([]json.RawMessage, data.Page, error) {
	var list []json.RawMessage
	page, err := db.listAgents(ctx, f, func(e agentCacheEntry) { list = append(list, e.json) })
	return list, page, err
}
