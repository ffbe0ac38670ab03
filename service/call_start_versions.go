package service

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/voiceapi/voiceapi/conversation"
	"github.com/voiceapi/voiceapi/data"
)

// maxCachedVersions bounds the published versions kept in memory; past it the cache
// starts again empty (a miss is one read of a version).
const maxCachedVersions = 4096

// versionCache keeps published versions as a call start needs them. A version never
// changes once published (restore and publish make new states of the agent, never new
// contents of an old version) and its number is never given again, and a deleted
// agent's versions are never asked for again (a start reads the agent first). A deleted
// version is dropped here (drop), not from another replica's cache: only versions a
// delete refuses (versionInUse: published, a rollout's, an open call's) are read through
// it, so an entry asked for is never stale.
type versionCache struct {
	mu sync.Mutex
	m  map[string]*runVersion
}

// runVersion is one published version: its name and configuration (api_key sealed as
// stored).
type runVersion struct {
	name string
	cfg  data.AgentConfig
}

// maxDuration is how long the version's calls may last.
func (v *runVersion) maxDuration() time.Duration {
	return time.Duration(v.cfg.CallConfig.MaxCallDurationMS) * time.Millisecond
}

func versionKey(agentID string, n int) string { return agentID + "/" + strconv.Itoa(n) }

// get returns version n of agentID, read in tx on a miss. A version that does not exist
// is an error: callers ask only for versions they know are published.
func (c *versionCache) get(tx Tx, agentID string, n int) (*runVersion, error) {
	v, err := c.find(tx, agentID, n)
	if err == nil && v == nil {
		err = fmt.Errorf("agent %s has no version %d", agentID, n)
	}
	return v, err
}

// find is get for a version that may be gone (its agent deleted): nil, nil then.
func (c *versionCache) find(tx Tx, agentID string, n int) (*runVersion, error) {
	key := versionKey(agentID, n)
	c.mu.Lock()
	v := c.m[key]
	c.mu.Unlock()
	if v != nil {
		return v, nil
	}
	stored, err := tx.AgentVersion(agentID, n)
	if err != nil || stored == nil {
		return nil, err
	}
	v = &runVersion{name: stored.Name, cfg: stored.AgentConfig}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedVersions {
		c.m = map[string]*runVersion{}
	}
	c.m[key] = v
	c.mu.Unlock()
	return v, nil
}

// drop forgets version n of agentID, deleted.
func (c *versionCache) drop(agentID string, n int) {
	c.mu.Lock()
	delete(c.m, versionKey(agentID, n))
	c.mu.Unlock()
}

// callValues are the values a call's configuration is filled with (conventions §23),
// lowest precedence first: the version's default_variables, the number's variables, the
// call's own; then the built-ins where none of those gives them (conversation.WithBuiltIns).
func callValues(v *runVersion, number *data.Number, call map[string]any, facts conversation.CallFacts) map[string]any {
	var numberVars map[string]any
	if number != nil {
		numberVars = number.Variables
	}
	facts.Location = v.cfg.PromptConfig.Location()
	return conversation.WithBuiltIns(conversation.Merge(v.cfg.PromptConfig.DefaultVariables, numberVars, call), facts)
}
