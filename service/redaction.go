package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// seen at once (a new key) and no entry is ever stale; and, per workspace and agent, the
// setting last written with, which a write tries first (the write transaction checks it).
type redactors struct {
	mu   sync.Mutex
	m    map[string]*redact.Redactor
	last map[string]seenSetting
}

// seenSetting is a merged setting as writeRedacted used it: its encoding and compiled form.
type seenSetting struct {
	key string
	r   *redact.Redactor
}

func (c *redactors) lastSeen(workspaceID, agentID string) (seenSetting, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.last[workspaceID+"\x00"+agentID]
	return s, ok
}

func (c *redactors) remember(workspaceID, agentID string, s seenSetting) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil || len(c.last) >= maxCachedRedactors {
		c.last = map[string]seenSetting{}
	}
	c.last[workspaceID+"\x00"+agentID] = s
}

func (c *redactors) get(cfg redact.Config, key string) (*redact.Redactor, error) {
	c.mu.Lock()
	r := c.m[key]
	c.mu.Unlock()
	if r != nil {
		return r, nil
	}
	r, err := redact.New(cfg)
	if err != nil {
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

// redactionSetting reads, in tx, the setting for calls of agentID in workspaceID: the
// workspace's merged with the agent's (the agent adds, docs/calls.md), and its encoding,
// which names it ("" when neither redacts anything).
func redactionSetting(tx Tx, workspaceID, agentID string) (redact.Config, string, error) {
	var ws, agent data.Redaction
	w, err := tx.Workspace(workspaceID)
	if err != nil {
		return redact.Config{}, "", err
	}
	if w != nil {
		ws = w.Privacy.Redaction
	}
	a, err := tx.Agent(agentID)
	if err != nil {
		return redact.Config{}, "", err
	}
	if a != nil && a.WorkspaceID == workspaceID {
		agent = a.Privacy.Redaction
	}
	if ws.Empty() && agent.Empty() {
		return redact.Config{}, "", nil
	}
	cfg := redact.Merge(validate.RedactionConfig(ws), validate.RedactionConfig(agent))
	raw, err := json.Marshal(cfg)
	return cfg, string(raw), err
}

// errRedactionMoved says that the redaction setting changed between the read that
// redaction used and the write transaction.
var errRedactionMoved = errors.New("the redaction setting changed while redacting")

// maxRedactionRounds bounds how often a write redacts again because the setting changed
// meanwhile; settings change seldom, so a request that loses that many times is told to
// retry.
const maxRedactionRounds = 3

// writeRedacted redacts a call before its write transaction and writes it: apply redacts
// the request's values with the setting for agentID's calls in workspaceID outside any
// transaction (its cost never holds the store's writer, so no other write of any
// workspace waits for it), then write runs in Store.Update once the setting is seen
// unchanged there. The setting tried first is the one this pair's last write used (no
// extra read in the common case); when the write finds another, the setting is read and
// the values redacted again. apply must work from the request's values each time, not
// from an earlier round's output.
func (b *base) writeRedacted(ctx context.Context, workspaceID, agentID string, apply func(*redact.Redactor) error, write func(tx Tx) error) error {
	seen, known := b.redactors.lastSeen(workspaceID, agentID)
	for round := 1; ; round++ {
		if !known {
			var err error
			if seen, err = b.readSetting(ctx, workspaceID, agentID); err != nil {
				return err
			}
		}
		if b.redactHook != nil {
			b.redactHook(workspaceID)
		}
		if err := apply(seen.r); err != nil {
			return err
		}
		err := b.store.Update(ctx, func(tx Tx) error {
			if _, now, err := redactionSetting(tx, workspaceID, agentID); err != nil || now != seen.key {
				return cmp.Or(err, errRedactionMoved)
			}
			return write(tx)
		})
		if err == nil {
			b.redactors.remember(workspaceID, agentID, seen)
		}
		if !errors.Is(err, errRedactionMoved) {
			return err
		}
		if round == maxRedactionRounds {
			return data.Errorf(data.EUNAVAILABLE, "The redaction setting of this call's workspace or agent changed while the call was being redacted, %d times; retry the request.", round)
		}
		known = false
	}
}

// readSetting reads and compiles the setting for agentID's calls in workspaceID.
func (b *base) readSetting(ctx context.Context, workspaceID, agentID string) (seenSetting, error) {
	var cfg redact.Config
	var out seenSetting
	err := b.store.View(ctx, func(tx Tx) error {
		var err error
		cfg, out.key, err = redactionSetting(tx, workspaceID, agentID)
		return err
	})
	if err != nil || out.key == "" {
		return out, err
	}
	out.r, err = b.redactors.get(cfg, out.key)
	return out, err
}

// callFields names the members of a call that redaction covers.
type callFields struct{ transcript, variables, analysis bool }

var allCallFields = callFields{true, true, true}

// redactCall replaces, in the members of c that fields names, every match of r with its
// marker. It builds new values (the caller's input is not changed) and runs before the call
// is stored, indexed, recorded in an event (webhooks) or answered: nothing downstream ever
// sees the raw text. Text whose redaction would cost more than redact.MaxWork is refused
// before any rule runs (422 naming the largest of the members).
func redactCall(r *redact.Redactor, c *data.Call, fields callFields) error {
	if r == nil {
		return nil
	}
	if err := checkRedactionWork(r, c, fields); err != nil {
		return err
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
	return nil
}

// checkRedactionWork refuses text that r's rules would take more than redact.MaxWork to
// scan: the bytes of the transcript's contents and of the objects' encodings (which hold
// their strings), times the rules' instructions.
func checkRedactionWork(r *redact.Redactor, c *data.Call, fields callFields) error {
	sizes := map[string]int{}
	if fields.transcript {
		for _, it := range c.Transcript {
			sizes["transcript"] += len(it.Content)
		}
	}
	return checkWork(r, c, fields, sizes)
}

// checkConversationWork is checkRedactionWork for an ended conversation's items and the
// call they become: the items' text (contents, tool calls' arguments and results) counts
// as the transcript it is redacted for.
func checkConversationWork(r *redact.Redactor, items []data.ConversationItem, c *data.Call) error {
	sizes := map[string]int{}
	for _, it := range items {
		sizes["transcript"] += itemTextBytes(it)
	}
	return checkWork(r, c, callFields{variables: true, analysis: true}, sizes)
}

// itemTextBytes is the text of a conversation's item that its end redacts: the content,
// and a tool call's arguments and result as encoded.
func itemTextBytes(it data.ConversationItem) int {
	n := len(it.Content)
	if it.ToolCall != nil {
		args, _ := json.Marshal(it.ToolCall.Arguments)
		result, _ := json.Marshal(it.ToolCall.Result)
		n += len(args) + len(result)
	}
	return n
}

// WithheldTooLong stands for the text of a conversation's items that its end could not
// redact within redact.MaxWork (fitConversationWork).
const WithheldTooLong = "[withheld: too long to redact]"

// fitConversationWork returns items cut to what r's rules redact within redact.MaxWork,
// c's variables counted first: from the first item whose text would pass the budget on,
// each item's content, and its tool call's arguments and result, are WithheldTooLong.
// An end cannot be refused for its length (nobody can shorten what was said, and an idle
// conversation must end: refused, it stayed open and raw, and the idle sweep met it
// again every minute), and text not redacted must not be kept, so the tail goes, as a
// transcript's past its byte bound does (Transcript). items is returned as it is when it
// fits.
func fitConversationWork(r *redact.Redactor, items []data.ConversationItem, c *data.Call) []data.ConversationItem {
	perByte := r.Work(1)
	if perByte == 0 || checkConversationWork(r, items, c) == nil {
		return items
	}
	budget := redact.MaxWork / perByte
	if len(c.Variables) > 0 {
		raw, _ := json.Marshal(c.Variables)
		budget -= int64(len(raw))
	}
	marker, _ := json.Marshal(WithheldTooLong)
	// Each item withheld still holds markers the rules scan: room for them is kept.
	budget -= int64(len(items) * (len(WithheldTooLong) + 2*len(marker)))
	out := make([]data.ConversationItem, len(items))
	var used int64
	cut := false
	for i, it := range items {
		n := int64(itemTextBytes(it))
		if !cut && used+n <= budget {
			used += n
			out[i] = it
			continue
		}
		cut = true
		if it.Content != "" {
			it.Content = WithheldTooLong
		}
		if it.ToolCall != nil {
			tc := *it.ToolCall
			tc.Arguments, tc.Result = WithheldTooLong, WithheldTooLong
			it.ToolCall = &tc
		}
		out[i] = it
	}
	return out
}

// checkWork adds to sizes the encodings of c's objects that fields names and refuses
// the total when r's rules would take more than redact.MaxWork over it, naming the
// largest member.
func checkWork(r *redact.Redactor, c *data.Call, fields callFields, sizes map[string]int) error {
	for name, obj := range map[string]map[string]any{"variables": c.Variables, "analysis": c.Analysis} {
		if len(obj) > 0 && (name == "variables" && fields.variables || name == "analysis" && fields.analysis) {
			raw, _ := json.Marshal(obj)
			sizes[name] = len(raw)
		}
	}
	total, largest := 0, "transcript"
	for name, n := range sizes {
		total += n
		if n > sizes[largest] {
			largest = name
		}
	}
	if work := r.Work(total); work > redact.MaxWork {
		return data.FieldError(largest, fmt.Sprintf("The %s field is too long for the custom redaction rules of this call's workspace and agent: %d bytes of text times %d rule instructions is more than the %d this server redacts in one call. Send less text, or simplify the rules (docs/redaction.md).", largest, total, work/int64(max(total, 1)), int64(redact.MaxWork)))
	}
	return nil
}

func redactObject(r *redact.Redactor, m map[string]any) map[string]any {
	out, _ := r.ApplyJSON(m)
	if o, ok := out.(map[string]any); ok {
		return o
	}
	return m
}
