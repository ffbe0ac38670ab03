package service

import (
	"sync"

	"github.com/voiceapi/voiceapi/data"
)

// LocalRevisionTx is an optional capability of a Tx whose AgentRevision is a read of the
// engine's own memory map (bolt: a fingerprint of the stored bytes), not a round trip to
// a server. The agent service then reads, in the write transaction itself, the revision
// of the row it has just stored, and keeps the row for the next update of that agent
// (agentRowCache). On an engine where that read is a statement (PostgreSQL) the cache is
// left out: it would add a round trip to every write to save one to some.
type LocalRevisionTx interface {
	// LocalRevisions reports whether AgentRevision is answered without a round trip.
	LocalRevisions() bool
}

// agentRowCache keeps agents as stored (api_key sealed), each with the storage revision
// it was stored or read at. An update takes the row it merges into from here when the
// revision it reads in its own transaction is the entry's, so the entry is never stale
// (as agentCache). Decoding the stored row was a fifth of a full-body PUT's CPU under
// load; an update that follows another of the same agent now skips it. Entries are
// shared and never modified: the update copies what it changes (prepareUpdate).
type agentRowCache struct {
	mu      sync.Mutex
	entries map[string]agentRowEntry
}

type agentRowEntry struct {
	rev uint64
	row *data.StoredAgent
}

// get returns the row cached for id at revision rev, if any.
func (c *agentRowCache) get(id string, rev uint64) (*data.StoredAgent, bool) {
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	return e.row, ok && rev != 0 && e.rev == rev
}

// put remembers row, the agent id as stored at revision rev.
func (c *agentRowCache) put(id string, rev uint64, row *data.StoredAgent) {
	if rev == 0 || row == nil {
		return
	}
	kept := *row
	kept.JSON = nil // the response's bytes: an update encodes its own, and they are as big again
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= agentCacheSize {
		c.entries = make(map[string]agentRowEntry, 64) // as agentCache: crude, cheap, bounded
	}
	c.entries[id] = agentRowEntry{rev: rev, row: &kept}
}

// storedRevision returns the revision of the agent id that tx has just stored, when the
// engine answers that from memory (LocalRevisionTx), else 0: nothing is cached.
func storedRevision(tx Tx, id string) (uint64, error) {
	if l, ok := tx.(LocalRevisionTx); !ok || !l.LocalRevisions() {
		return 0, nil
	}
	return tx.AgentRevision(id)
}
