package service

import (
	"encoding/json"
	"sync"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/redact"
	"github.com/voiceapi/voiceapi/validate"
)

// maxCachedRedactors bounds the compiled settings kept: one per distinct (workspace, agent)
// merge in use. Past it the cache starts again empty; compiling is a few microseconds per
// rule, so a miss costs little and the bound keeps memory flat whatever settings exist.
const maxCachedRedactors = 1024

// redactors caches compiled redaction settings by their content, so a setting's change is
// seen at once (a new key) and no entry is ever stale.
type redactors struct {
	mu sync.Mutex
	m  map[string]*redact.Redactor
}

func (c *redactors) get(cfg redact.Config) (*redact.Redactor, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	key := string(raw)
	c.mu.Lock()
	r := c.m[key]
	c.mu.Unlock()
	if r != nil {
		return r, nil
	}
	if r, err = redact.New(cfg); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedRedactors {
		c.m = map[string]*redact.Redactor{}
	}
	c.m[key] = r
	c.mu.Unlock()
	return r, nil
}

// callRedactor returns the redactor for calls of agentID in workspaceID: the workspace's
// setting merged with the agent's (the agent adds, docs/calls.md), nil when neither redacts
// anything. It reads both records in tx, so a setting changed in an earlier transaction
// applies to the next write of a call.
func (b *base) callRedactor(tx Tx, workspaceID, agentID string) (*redact.Redactor, error) {
	var ws, agent data.Redaction
	w, err := tx.Workspace(workspaceID)
	if err != nil {
		return nil, err
	}
	if w != nil {
		ws = w.Privacy.Redaction
	}
	a, err := tx.Agent(agentID)
	if err != nil {
		return nil, err
	}
	if a != nil && a.WorkspaceID == workspaceID {
		agent = a.Privacy.Redaction
	}
	if ws.Empty() && agent.Empty() {
		return nil, nil
	}
	return b.redactors.get(redact.Merge(validate.RedactionConfig(ws), validate.RedactionConfig(agent)))
}

// callFields names the members of a call that redaction covers.
type callFields struct{ transcript, variables, analysis bool }

var allCallFields = callFields{true, true, true}

// redactCall replaces, in the members of c that fields names, every match of r with its
// marker. It builds new values (the caller's input is not changed) and runs before the call
// is stored, indexed, recorded in an event (webhooks) or answered: nothing downstream ever
// sees the raw text.
func redactCall(r *redact.Redactor, c *data.Call, fields callFields) {
	if r == nil {
		return
	}
	if fields.transcript && c.Transcript != nil {
		items := make([]data.TranscriptItem, len(c.Transcript))
		for i, it := range c.Transcript {
			it.Content, _ = r.Apply(it.Content)
			items[i] = it
		}
		c.Transcript = items
	}
	if fields.variables && c.Variables != nil {
		c.Variables = redactObject(r, c.Variables)
	}
	if fields.analysis && c.Analysis != nil {
		c.Analysis = redactObject(r, c.Analysis)
	}
}

func redactObject(r *redact.Redactor, m map[string]any) map[string]any {
	out, _ := r.ApplyJSON(m)
	if o, ok := out.(map[string]any); ok {
		return o
	}
	return m
}
