package bolt

import (
	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

func getWorkspace(b *bbolt.Tx, id string) (*data.WorkspaceRecord, error) {
	var w data.WorkspaceRecord
	found, err := getJSON(b.Bucket(bucketWorkspaces), []byte(id), &w)
	if err != nil || !found {
		return nil, err
	}
	return &w, nil
}

// Workspace implements service.AccountTx.
func (t tx) Workspace(id string) (*data.WorkspaceRecord, error) { return getWorkspace(t.b, id) }

// PutWorkspace implements service.AccountTx.
func (t tx) PutWorkspace(w *data.WorkspaceRecord) error {
	return putJSON(t.b.Bucket(bucketWorkspaces), []byte(w.ID), w)
}

// WorkspacePage implements service.AccountTx.
func (t tx) WorkspacePage(userID string, req data.PageRequest) ([]*data.WorkspaceRecord, data.Page, error) {
	ids, page, err := t.db.page(t.b, bucketMemberships, userID, req)
	if err != nil {
		return nil, page, err
	}
	list := make([]*data.WorkspaceRecord, 0, len(ids))
	for _, id := range ids {
		w, err := getWorkspace(t.b, id)
		if err != nil {
			return nil, page, err
		}
		if w != nil {
			list = append(list, w)
		}
	}
	return list, page, nil
}

// AllWorkspaces implements service.AccountTx.
func (t tx) AllWorkspaces() ([]*data.WorkspaceRecord, error) {
	var list []*data.WorkspaceRecord
	err := t.b.Bucket(bucketWorkspaces).ForEach(func(k, v []byte) error {
		var w data.WorkspaceRecord
		if err := jsonUnmarshal(v, &w); err != nil {
			return err
		}
		list = append(list, &w)
		return nil
	})
	return list, err
}

// DeleteWorkspace implements service.AccountTx.
func (t tx) DeleteWorkspace(id string) error { return t.db.deleteWorkspaceTx(t.b, id) }

// deleteWorkspaceTx removes a workspace and every record in it, in tx.
func (db *DB) deleteWorkspaceTx(b *bbolt.Tx, id string) error {
	for _, cascade := range workspaceCascades {
		if err := cascade(db, b, id); err != nil {
			return err
		}
	}
	for _, userID := range scopeIDs(b.Bucket(bucketMembers), id) {
		if err := deleteMember(b, id, userID); err != nil {
			return err
		}
	}
	if err := deleteWorkspaceTokens(b, id, func(*data.APIKeyRecord) bool { return true }); err != nil {
		return err
	}
	if err := deleteWorkspaceEvents(b, id); err != nil {
		return err
	}
	if err := unlistWorkspaceStarts(b, id); err != nil {
		return err
	}
	return b.Bucket(bucketWorkspaces).Delete([]byte(id))
}
