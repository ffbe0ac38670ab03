package service

import (
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// tokenCache keeps what Authenticate built for a token, with the revisions of the three
// rows it came from (the token, its user, its membership). Authenticate reads the three
// revisions on every request and uses an entry only when all match, so a revoked or
// expired token, a deleted user, a changed role, modules or agent_ids simply miss: the
// cache is never stale, in one process or across replicas, and needs no invalidation.
// The secret is still hashed and compared in constant time on every request.
type tokenCache struct {
	mu      sync.RWMutex
	entries map[int64]*tokenEntry
}

type tokenEntry struct {
	keyRev, userRev, memberRev uint64
	hash                       []byte // SHA-256 of the secret
	expires                    *time.Time
	principal                  data.Principal
}

const tokenCacheSize = 4096

func (c *tokenCache) get(id int64) (*tokenEntry, bool) {
	c.mu.RLock()
	e, ok := c.entries[id]
	c.mu.RUnlock()
	return e, ok
}

func (c *tokenCache) put(id int64, e *tokenEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= tokenCacheSize {
		c.entries = make(map[int64]*tokenEntry, 64) // crude, cheap, bounded
	}
	c.entries[id] = e
}
