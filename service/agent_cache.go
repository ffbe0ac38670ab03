package service

import (
	"sync"

	"github.com/voiceapi/voiceapi/data"
)

// agentCache keeps agents as reads return them (decoded, api_key masked, and encoded),
// each with the storage revision it was read at (AgentTx.AgentRevision). A read takes an
// entry only when the revision it reads in its own transaction is the entry's, so the
// cache is never stale and needs no invalidation: a write, a restore or a delete, in
// this process or another one sharing the storage, simply makes the entry miss.
// Decoding a full agent row and unsealing its api_key was about a third of
// GET /agents/{id}'s CPU, and ten times that for a page of 100.
type agentCache struct {
	mu      sync.RWMutex
	entries map[string]agentCacheEntry
}

type agentCacheEntry struct {
	rev   uint64
	agent *data.Agent // masked; shared by readers, never modified
	json  []byte      // json.Marshal's bytes for agent (AppendJSON): what a response sends, made once
}

// agentCacheSize bounds the cache (a full agent is a few kB, twice: decoded and encoded).
const agentCacheSize = 2048

// get returns the entry cached for id at revision rev, if any.
func (c *agentCache) get(id string, rev uint64) (agentCacheEntry, bool) {
	c.mu.RLock()
	e, ok := c.entries[id]
	c.mu.RUnlock()
	return e, ok && e.rev == rev
}

// put remembers a (masked), read at revision rev.
func (c *agentCache) put(id string, rev uint64, a *data.Agent) (agentCacheEntry, error) {
	enc, err := a.AppendJSON(nil)
	if err != nil {
		return agentCacheEntry{}, err
	}
	e := agentCacheEntry{rev: rev, agent: a, json: enc}
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
