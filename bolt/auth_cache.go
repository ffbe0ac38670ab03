package bolt

import (
	"bytes"
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// tokenCache keeps what Authenticate decoded for a token (its row, its user, its
// membership in the token's workspace) with the stored bytes of those three rows.
// Authenticate still reads the three rows in its own transaction on every request, and
// uses an entry only when all three are byte for byte the ones it was made from: a
// revoked or expired token, a deleted user, a changed role, modules or agent_ids, all
// change or remove a row, so the entry simply misses. Nothing needs invalidating. The
// secret is still hashed and compared in constant time on every request. Three JSON
// decodes were a fifth of a GET agent's CPU.
type tokenCache struct {
	mu      sync.RWMutex
	entries map[int64]tokenCacheEntry
}

type tokenCacheEntry struct {
	key, user, member []byte // the stored rows (member nil when not a member)
	hash              []byte // SHA-256 of the secret, from the token row
	expires           *time.Time
	principal         data.Principal
}

const tokenCacheSize = 4096

func (c *tokenCache) get(id int64, key []byte) (tokenCacheEntry, bool) {
	c.mu.RLock()
	e, ok := c.entries[id]
	c.mu.RUnlock()
	return e, ok && bytes.Equal(e.key, key)
}

// put remembers e; its byte slices must not be bbolt's (they are only valid inside the
// transaction).
func (c *tokenCache) put(id int64, e tokenCacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= tokenCacheSize {
		c.entries = make(map[int64]tokenCacheEntry, 64) // crude, cheap, bounded
	}
	c.entries[id] = e
}
