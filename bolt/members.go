package bolt

import (
	"slices"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// Members live under "<workspace>\x00<user>" in members, with "<user>\x00<workspace>" in
// memberships.
func memberKey(workspaceID, userID string) []byte { return indexKey(workspaceID, userID) }

func putMember(b *bbolt.Tx, m *data.MemberRecord) error {
	if err := putJSON(b.Bucket(bucketMembers), memberKey(m.WorkspaceID, m.UserID), m); err != nil {
		return err
	}
	return indexPut(b.Bucket(bucketMemberships), m.UserID, m.WorkspaceID)
}

func getMember(b *bbolt.Tx, workspaceID, userID string) (*data.MemberRecord, error) {
	var m data.MemberRecord
	found, err := getJSON(b.Bucket(bucketMembers), memberKey(workspaceID, userID), &m)
	if err != nil || !found {
		return nil, err
	}
	return &m, nil
}

func deleteMember(b *bbolt.Tx, workspaceID, userID string) error {
	if err := b.Bucket(bucketMembers).Delete(memberKey(workspaceID, userID)); err != nil {
		return err
	}
	return indexDelete(b.Bucket(bucketMemberships), userID, workspaceID)
}

// Member implements service.AccountTx.
func (t tx) Member(workspaceID, userID string) (*data.MemberRecord, error) {
	return getMember(t.b, workspaceID, userID)
}

// PutMember implements service.AccountTx.
func (t tx) PutMember(m *data.MemberRecord) error { return putMember(t.b, m) }

// DeleteMember implements service.AccountTx.
func (t tx) DeleteMember(workspaceID, userID string) error {
	if err := deleteMember(t.b, workspaceID, userID); err != nil {
		return err
	}
	return deleteWorkspaceTokens(t.b, workspaceID, func(k *data.APIKeyRecord) bool { return k.UserID == userID })
}

// MemberPage implements service.AccountTx.
func (t tx) MemberPage(workspaceID string, req data.PageRequest) ([]*data.MemberRecord, data.Page, error) {
	ids, page, err := t.db.page(t.b, bucketMembers, workspaceID, req)
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.MemberRecord, 0, len(ids))
	for _, userID := range ids {
		m, err := getMember(t.b, workspaceID, userID)
		if err != nil {
			return nil, page, err
		}
		if m != nil {
			list = append(list, m)
		}
	}
	return list, page, nil
}

// Members implements service.AccountTx.
func (t tx) Members(workspaceID string) ([]*data.MemberRecord, error) {
	var list []*data.MemberRecord
	for _, userID := range scopeIDs(t.b.Bucket(bucketMembers), workspaceID) {
		m, err := getMember(t.b, workspaceID, userID)
		if err != nil {
			return nil, err
		}
		if m != nil {
			list = append(list, m)
		}
	}
	return list, nil
}

// MemberWorkspaces implements service.AccountTx.
func (t tx) MemberWorkspaces(userID string) ([]string, error) {
	return scopeIDs(t.b.Bucket(bucketMemberships), userID), nil
}

// MemberRevision implements service.AccountTx.
func (t tx) MemberRevision(workspaceID, userID string) (uint64, error) {
	return revision(t.b.Bucket(bucketMembers).Get(memberKey(workspaceID, userID))), nil
}

// AgentInWorkspace implements service.AccountTx.
func (t tx) AgentInWorkspace(workspaceID, agentID string) (bool, error) {
	return agentInWorkspace(t.b, workspaceID, agentID), nil
}

// agentInWorkspace reports whether agentID is an agent of workspaceID.
func agentInWorkspace(b *bbolt.Tx, workspaceID, agentID string) bool {
	return inWorkspace(b.Bucket(bucketAgents), workspaceID, agentID)
}

// knowledgeBaseInWorkspace reports whether kbID is a knowledge base of workspaceID.
func knowledgeBaseInWorkspace(b *bbolt.Tx, workspaceID, kbID string) bool {
	return inWorkspace(b.Bucket(bucketKnowledgeBase), workspaceID, kbID)
}

// inWorkspace reports whether the record id in bucket belongs to workspaceID: every
// workspace-scoped record stores its "workspace_id".
func inWorkspace(bucket *bbolt.Bucket, workspaceID, id string) bool {
	var rec struct {
		WorkspaceID string `json:"workspace_id"`
	}
	found, err := getJSON(bucket, []byte(id), &rec)
	return err == nil && found && rec.WorkspaceID == workspaceID
}

// removeAgentFromMembers drops a deleted agent from every member's agent_ids. A member
// whose list becomes empty would gain every agent, so such a member gets data.NoAgent.
func removeAgentFromMembers(b *bbolt.Tx, workspaceID, agentID string) error {
	for _, userID := range scopeIDs(b.Bucket(bucketMembers), workspaceID) {
		m, err := getMember(b, workspaceID, userID)
		if err != nil || m == nil {
			return err
		}
		i := slices.Index(m.AgentIDs, agentID)
		if i < 0 {
			continue
		}
		m.AgentIDs = slices.Delete(m.AgentIDs, i, i+1)
		if len(m.AgentIDs) == 0 {
			m.AgentIDs = []string{data.NoAgent}
		}
		if err := putJSON(b.Bucket(bucketMembers), memberKey(workspaceID, userID), m); err != nil {
			return err
		}
	}
	return nil
}
