package bolt

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/pagecursor"
	"github.com/voiceapi/voiceapi/service"
)

// agentRow is an agent as stored: llm_config.api_key sealed, and the number of the last
// version published.
type agentRow = data.StoredAgent

// versionRow is what decodes a version as stored (api_key sealed): its prompt_config
// through data.PromptConfigRow, as an agent row's (agentRowJSON).
type versionRow struct {
	data.AgentVersion
	PromptConfig data.PromptConfigRow `json:"prompt_config"`
}

func versionKey(agentID string, n int) []byte { return indexKey(agentID, fmt.Sprintf("%010d", n)) }

func statusScope(workspaceID, status string) string { return workspaceID + "/" + status }

// Agent implements service.AgentTx.
func (t tx) Agent(id string) (*data.StoredAgent, error) {
	return getAgentRow(t.b.Bucket(bucketAgents), id)
}

// Agents implements service.AgentTx: point reads in the one transaction.
func (t tx) Agents(ids []string) ([]*data.StoredAgent, error) {
	b := t.b.Bucket(bucketAgents)
	out := make([]*data.StoredAgent, len(ids))
	for i, id := range ids {
		a, err := getAgentRow(b, id)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// AgentRevision implements service.AgentTx: a fingerprint of the stored bytes.
func (t tx) AgentRevision(id string) (uint64, error) {
	return revision(t.b.Bucket(bucketAgents).Get([]byte(id))), nil
}

// PutAgent implements service.AgentTx.
func (t tx) PutAgent(a *data.StoredAgent, oldStatus string) error {
	if err := putAgentRow(t.b, a, oldStatus); err != nil {
		return err
	}
	if oldStatus == "" {
		idx := t.b.Bucket(bucketAgentsByWS)
		idx.FillPercent = appendFill
		return indexPut(idx, a.WorkspaceID, a.ID)
	}
	return nil
}

// DeleteAgent implements service.AgentTx.
func (t tx) DeleteAgent(a *data.StoredAgent) error { return t.db.deleteAgentTx(t.b, a) }

// AgentIDs implements service.AgentTx.
//
// A search reads each agent's row (and, for a knowledge base, its versions holding the
// id), so one page looks at no more than search.MaxScan agents; a short page then
// carries a cursor to go on from.
func (t tx) AgentIDs(workspaceID, status string, only []string, search service.AgentSearch, req data.PageRequest) ([]string, data.Page, error) {
	nameContains, usingKB := search.Name, search.KnowledgeBaseID
	index, scope := bucketAgentsByWS, workspaceID
	if status != "" {
		index, scope = bucketAgentsByState, statusScope(workspaceID, status)
	}
	// A limited caller's cursors are bound to its agents, as PostgreSQL's are: another
	// caller's cursor is refused, not read under these agents. Without a limit the
	// binding is as before, so that cursors handed out before still read.
	bound := ""
	if len(only) > 0 {
		bound = "only\x00" + pagecursor.Agents(only)
	}
	if nameContains == "" && usingKB == "" {
		var keep func(string) bool
		if len(only) > 0 {
			keep = func(id string) bool { return slices.Contains(only, id) }
		}
		return t.db.list(t.b, listSpec{index: index, scope: scope, filter: bound, keep: keep}, req)
	}
	var readErr error
	want := data.FoldCase(nameContains)
	matches := func(id string) bool {
		var row struct {
			Name string `json:"name"`
			kbRefs
		}
		found, err := getJSON(t.b.Bucket(bucketAgents), []byte(id), &row)
		if err != nil || !found || !strings.Contains(data.FoldCase(row.Name), want) {
			return false
		}
		if usingKB == "" || slices.Contains(row.LLMConfig.KnowledgeBaseIDs, usingKB) {
			return true
		}
		uses, err := t.versionUses(id, usingKB)
		if err != nil && readErr == nil {
			readErr = err
		}
		return uses
	}
	filter := "name\x00" + nameContains
	if usingKB != "" {
		filter += "\x00kb\x00" + usingKB
	}
	if bound != "" {
		filter += "\x00" + bound
	}
	spec := listSpec{index: index, scope: scope, filter: filter, keep: matches, maxScan: search.MaxScan}
	if len(only) > 0 {
		// The agents outside only are passed over uncounted: the bound is of the caller's
		// agents, so the others shape none of its pages.
		set := make(map[string]bool, len(only)) // up to validate.MaxIDListItems ids, each entry checked
		for _, id := range only {
			set[id] = true
		}
		spec.admit = func(id []byte) bool { return set[string(id)] }
	}
	ids, page, err := t.db.list(t.b, spec, req)
	if err == nil {
		err = readErr
	}
	return ids, page, err
}

// PutAgentVersion implements service.AgentTx.
func (t tx) PutAgentVersion(v *data.AgentVersion) error {
	b := t.b.Bucket(bucketAgentVersions)
	b.FillPercent = appendFill // numbered in order within an agent
	return putJSON(b, versionKey(v.AgentID, v.VersionNumber), v)
}

// AgentVersion implements service.AgentTx.
func (t tx) AgentVersion(agentID string, n int) (*data.AgentVersion, error) {
	var v versionRow
	v.PromptConfig.Into = &v.AgentVersion.PromptConfig
	found, err := getJSON(t.b.Bucket(bucketAgentVersions), versionKey(agentID, n), &v)
	if err != nil || !found {
		return nil, err
	}
	return &v.AgentVersion, nil
}

// AgentVersions implements service.AgentTx.
func (t tx) AgentVersions(agentID string, req data.PageRequest) ([]*data.AgentVersion, data.Page, error) {
	keys, page, err := t.db.page(t.b, bucketAgentVersions, agentID, req)
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.AgentVersion, 0, len(keys))
	for _, k := range keys {
		n, err := strconv.Atoi(k)
		if err != nil {
			return nil, page, fmt.Errorf("agent %s: version key %q: %w", agentID, k, err)
		}
		v, err := t.AgentVersion(agentID, n)
		if err != nil {
			return nil, page, err
		}
		if v != nil {
			list = append(list, v)
		}
	}
	return list, page, nil
}

// DeleteAgentVersion implements service.AgentTx.
func (t tx) DeleteAgentVersion(agentID string, n int) error {
	return t.b.Bucket(bucketAgentVersions).Delete(versionKey(agentID, n))
}

// AgentVersionCount implements service.AgentTx: a walk of the agent's keys, at most upTo.
func (t tx) AgentVersionCount(agentID string, upTo int) (int, error) {
	prefix := indexKey(agentID, "")
	n := 0
	c := t.b.Bucket(bucketAgentVersions).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && n < upTo; k, _ = c.Next() {
		n++
	}
	return n, nil
}

// KnowledgeBaseExists implements service.AgentTx.
func (t tx) KnowledgeBaseExists(workspaceID, id string) (bool, error) {
	return knowledgeBaseInWorkspace(t.b, workspaceID, id), nil
}

// AgentsUsingKnowledgeBase implements service.AgentTx: the workspace's agents read as
// its delete's cascade (removeKnowledgeBaseFromAgents) reads them, and their versions.
// Each row is read for its knowledge_base_ids alone (kbRefs): a knowledge base's show
// asks this for every caller limited to some agents (its access).
func (t tx) AgentsUsingKnowledgeBase(workspaceID, kbID string) ([]string, error) {
	var using []string
	b := t.b.Bucket(bucketAgents)
	for _, id := range scopeIDs(t.b.Bucket(bucketAgentsByWS), workspaceID) {
		var row kbRefs
		found, err := getJSON(b, []byte(id), &row)
		if err != nil {
			return nil, fmt.Errorf("decoding agent %s: %w", id, err)
		}
		if !found {
			continue
		}
		uses := slices.Contains(row.LLMConfig.KnowledgeBaseIDs, kbID)
		if !uses {
			if uses, err = t.versionUses(id, kbID); err != nil {
				return nil, err
			}
		}
		if uses {
			using = append(using, id)
		}
	}
	return using, nil
}

// kbRefs is what AgentsUsingKnowledgeBase reads of an agent's or a version's row: its
// knowledge_base_ids, the rest of the row passed over rather than built.
type kbRefs struct {
	LLMConfig struct {
		KnowledgeBaseIDs []string `json:"knowledge_base_ids"`
	} `json:"llm_config"`
}

// versionUses reports whether a stored version of agentID names kbID in its
// knowledge_base_ids (a live or rollout version retrieves from it). A version whose
// stored bytes do not hold the id cannot name it and is not decoded: a limited caller's
// every knowledge base write reads every version of the workspace's agents, in the
// write's transaction (docs/performance.md).
func (t tx) versionUses(agentID, kbID string) (bool, error) {
	prefix, id := indexKey(agentID, ""), []byte(kbID)
	c := t.b.Bucket(bucketAgentVersions).Cursor()
	for k, raw := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, raw = c.Next() {
		if holds, err := storedContains(raw, id); err != nil {
			return false, fmt.Errorf("agent %s: version %q: %w", agentID, k[len(prefix):], err)
		} else if !holds {
			continue
		}
		var row kbRefs
		if err := jsonUnmarshal(raw, &row); err != nil {
			return false, fmt.Errorf("agent %s: version %q: %w", agentID, k[len(prefix):], err)
		}
		if slices.Contains(row.LLMConfig.KnowledgeBaseIDs, kbID) {
			return true, nil
		}
	}
	return false, nil
}

// putAgentRow stores row as given and moves its status index entry from oldStatus.
func putAgentRow(tx *bbolt.Tx, row *agentRow, oldStatus string) error {
	raw, err := encodeAgentRow(row)
	if err != nil {
		return fmt.Errorf("encoding agent %s: %w", row.ID, err)
	}
	b := tx.Bucket(bucketAgents)
	b.FillPercent = appendFill // ids are time-ordered: new agents land at the end
	if err := b.Put([]byte(row.ID), encodeValue(raw)); err != nil {
		return err
	}
	return moveAgentStatus(tx, &row.Agent, oldStatus)
}

// moveAgentStatus moves a's entry in the status index from oldStatus ("" for a new agent).
func moveAgentStatus(tx *bbolt.Tx, a *data.Agent, oldStatus string) error {
	if oldStatus == a.Status {
		return nil
	}
	idx := tx.Bucket(bucketAgentsByState)
	idx.FillPercent = appendFill // new agents (drafts) land at the end of their scope
	if oldStatus != "" {
		if err := indexDelete(idx, statusScope(a.WorkspaceID, oldStatus), a.ID); err != nil {
			return err
		}
	}
	return indexPut(idx, statusScope(a.WorkspaceID, a.Status), a.ID)
}

// deleteAgentTx removes an agent, its versions and its index entries, and runs the agent
// delete hooks (numbers unbound, members' agent_ids); its call history stays.
func (db *DB) deleteAgentTx(tx *bbolt.Tx, row *agentRow) error {
	versions := tx.Bucket(bucketAgentVersions)
	for _, n := range scopeIDs(versions, row.ID) {
		if err := versions.Delete(indexKey(row.ID, n)); err != nil {
			return err
		}
	}
	if err := indexDelete(tx.Bucket(bucketAgentsByWS), row.WorkspaceID, row.ID); err != nil {
		return err
	}
	if err := indexDelete(tx.Bucket(bucketAgentsToSeal), row.WorkspaceID, row.ID); err != nil {
		return err
	}
	if err := indexDelete(tx.Bucket(bucketAgentsByState), statusScope(row.WorkspaceID, row.Status), row.ID); err != nil {
		return err
	}
	if err := tx.Bucket(bucketAgents).Delete([]byte(row.ID)); err != nil {
		return err
	}
	for _, hook := range agentDeleteHooks {
		if err := hook(db, tx, row.WorkspaceID, row.ID); err != nil {
			return err
		}
	}
	return nil
}

// deleteWorkspaceAgents is the agents' part of deleting a workspace.
func deleteWorkspaceAgents(db *DB, tx *bbolt.Tx, workspaceID string) error {
	for _, id := range scopeIDs(tx.Bucket(bucketAgentsByWS), workspaceID) {
		row, err := getAgentRow(tx.Bucket(bucketAgents), id)
		if err != nil {
			return err
		}
		if row != nil {
			if err := db.deleteAgentTx(tx, row); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeKnowledgeBaseFromAgents drops a deleted knowledge base from the knowledge_base_ids
// of the workspace's agents, in the knowledge base's delete transaction. Versions keep
// their snapshot as published.
func removeKnowledgeBaseFromAgents(db *DB, tx *bbolt.Tx, workspaceID, kbID string) error {
	b := tx.Bucket(bucketAgents)
	for _, id := range scopeIDs(tx.Bucket(bucketAgentsByWS), workspaceID) {
		row, err := getAgentRow(b, id)
		if err != nil {
			return err
		}
		if row == nil {
			continue
		}
		i := slices.Index(row.LLMConfig.KnowledgeBaseIDs, kbID)
		if i < 0 {
			continue
		}
		row.LLMConfig.KnowledgeBaseIDs = slices.Delete(row.LLMConfig.KnowledgeBaseIDs, i, i+1)
		// The row is written as read: its api_key stays sealed.
		if err := putAgentRow(tx, row, row.Status); err != nil {
			return err
		}
	}
	return nil
}
