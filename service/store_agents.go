package service

import "github.com/voiceapi/voiceapi/data"

// AgentTx stores agents and their versions (conventions §7). Records go in and come out
// with llm_config.api_key as the service gives it (sealed); storage never opens it.
type AgentTx interface {
	// Agent returns the stored agent id, nil when there is none.
	Agent(id string) (*data.StoredAgent, error)
	// Agents returns the stored agents of ids, in the order of ids, nil for an absent
	// one: one statement on PostgreSQL, so a reader of many agents (an export's analysis
	// columns) pays one round trip a page rather than one an agent.
	Agents(ids []string) ([]*data.StoredAgent, error)
	// AgentRevision returns a number that differs whenever the stored agent id differs
	// (a hash of the stored row, or a revision column), 0 when there is none. It reads no
	// more than the row and decodes nothing, so a cache can be checked against it.
	AgentRevision(id string) (uint64, error)
	// PutAgent stores a, new or replacing the stored one, and keeps its index entries: by
	// workspace, newest first, and by workspace and status, moved from oldStatus ("" for
	// a new agent). a.JSON, when set, is a.Agent masked and encoded (the response's
	// bytes): an engine may keep it rather than encode the row again, its api_key member
	// aside (the sealed key is a.LLMConfig.APIKey); an engine may also ignore it. It is
	// nil when a custom function's credential header, masked there, is sealed in a. Agent
	// returns the row with JSON nil either way.
	PutAgent(a *data.StoredAgent, oldStatus string) error
	// DeleteAgent removes the agent, its versions and its index entries, and runs the
	// cascades other resources registered: numbers bound to it are unbound, members'
	// agent_ids drop it. Its calls stay.
	DeleteAgent(a *data.StoredAgent) error
	// AgentIDs returns a page of the ids of the workspace's agents, newest first: of one
	// status unless status is "", only those in only unless only is empty, and those
	// search keeps (AgentSearch), which looks at no more than search.MaxScan agents a page.
	AgentIDs(workspaceID, status string, only []string, search AgentSearch, req data.PageRequest) ([]string, data.Page, error)
	// PutAgentVersion stores a published version. Storing one that exists replaces it
	// in place: versions are otherwise immutable, and only the job that seals the
	// credential headers stored in the clear does so (agent_seal_upgrade.go), besides a
	// move or an import into an empty place.
	PutAgentVersion(v *data.AgentVersion) error
	// AgentVersion returns version n of the agent, nil when there is none.
	AgentVersion(agentID string, n int) (*data.AgentVersion, error)
	// AgentVersions returns a page of the agent's versions, newest first.
	AgentVersions(agentID string, req data.PageRequest) ([]*data.AgentVersion, data.Page, error)
	// AgentsToSeal returns up to limit ids of the workspace's agents listed by the
	// storage upgrade (bbolt schema 16, PostgreSQL migration 0028: every agent stored
	// then) for the job that seals the credential headers an agent or its versions hold
	// in the clear (agent_seal_upgrade.go). Every write seals them since, so only the
	// upgrade and a move (ListAgentToSeal) add to the list.
	AgentsToSeal(workspaceID string, limit int) ([]string, error)
	// AgentSealed takes agent id off its workspace's list; deleting the agent does too.
	AgentSealed(workspaceID, id string) error
	// ListAgentToSeal puts agent id on its workspace's list: a move copies rows as
	// stored, clear headers and all, so it lists what it copies.
	ListAgentToSeal(workspaceID, id string) error
	// DeleteAgentVersion removes version n of the agent; an absent one is no error. The
	// agent's LastVersion is the service's: a number is never given twice.
	DeleteAgentVersion(agentID string, n int) error
	// AgentVersionCount counts the agent's versions, at most upTo of them (a bound's
	// check reads no more than the bound).
	AgentVersionCount(agentID string, upTo int) (int, error)
	// KnowledgeBaseExists reports whether id names a knowledge base of the workspace.
	KnowledgeBaseExists(workspaceID, id string) (bool, error)
	// AgentsUsingKnowledgeBase returns the ids of the workspace's agents whose
	// llm_config.knowledge_base_ids names kbID (those its delete's cascade changes), or
	// whose stored versions' (the live and a rollout's retrieve from it), in no
	// particular order.
	AgentsUsingKnowledgeBase(workspaceID, kbID string) ([]string, error)
}

// AgentSearch is a search of an agent list (AgentTx.AgentIDs). The zero search keeps all.
type AgentSearch struct {
	// Name keeps agents whose name contains it, ignoring case (data.FoldCase), unless "".
	Name string
	// KnowledgeBaseID keeps agents using that knowledge base, as AgentsUsingKnowledgeBase
	// reads it (the configuration or a stored version names it), unless "".
	KnowledgeBaseID string
	// MaxScan bounds the agents one page of a Name or KnowledgeBaseID search looks at,
	// in the scope's walk (status), the agents outside only counted too (0: no bound),
	// on every engine, so that both give the same pages: a page then ends short, even
	// empty, with a cursor past the last agent it looked at (service/storetest,
	// name_search_scan_bound).
	MaxScan int
}
