package bolt

import (
	"slices"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// membersUnlimitedKey marks, in the meta bucket, a file whose owners and admins carry no
// agent_ids: the data step below ran (once; a file restored from an older backup runs it
// again when it opens).
var membersUnlimitedKey = []byte("members_owners_admins_unlimited")

// unlimitOwnersAndAdmins moves stored memberships to the rule that owners and admins are
// never limited to some agents (conventions §6; docs/upgrading.md): an owner keeps the
// role and loses the limit (a workspace must keep its owners, and an owner could always
// lift it); an admin keeps the limit and becomes a developer with every module, so that
// nobody sees more than before. postgres/migrations/0008 does the same.
func unlimitOwnersAndAdmins(tx *bbolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta.Get(membersUnlimitedKey) != nil {
		return nil
	}
	b := tx.Bucket(bucketMembers)
	var changed []*data.MemberRecord
	err := b.ForEach(func(k, v []byte) error {
		var m data.MemberRecord
		if err := jsonUnmarshal(v, &m); err != nil {
			return err
		}
		if len(m.AgentIDs) == 0 || m.Role != data.RoleOwner && m.Role != data.RoleAdmin {
			return nil
		}
		if m.Role == data.RoleOwner {
			m.AgentIDs = []string{}
		} else {
			m.Role, m.Modules = data.RoleDeveloper, slices.Clone(data.Modules)
		}
		changed = append(changed, &m)
		return nil
	})
	if err != nil {
		return err
	}
	// Written after the walk: bbolt forbids changing a bucket inside its ForEach.
	for _, m := range changed {
		if err := putMember(tx, m); err != nil {
			return err
		}
	}
	return meta.Put(membersUnlimitedKey, []byte{1})
}
