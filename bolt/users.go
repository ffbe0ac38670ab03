package bolt

import (
	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// usersScope is the one scope of users_index: every account.
const usersScope = "all"

// getUser decodes the account id; nil when there is none.
func getUser(b *bbolt.Tx, id string) (*data.UserRecord, error) {
	var u data.UserRecord
	found, err := getJSON(b.Bucket(bucketUsers), []byte(id), &u)
	if err != nil || !found {
		return nil, err
	}
	return &u, nil
}

// User implements service.AccountTx.
func (t tx) User(id string) (*data.UserRecord, error) { return getUser(t.b, id) }

// UserByEmail implements service.AccountTx.
func (t tx) UserByEmail(email string) (*data.UserRecord, error) {
	id := t.b.Bucket(bucketUsersByEmail).Get([]byte(email))
	if id == nil {
		return nil, nil
	}
	return getUser(t.b, string(id))
}

// PutUser implements service.AccountTx.
func (t tx) PutUser(u *data.UserRecord) error {
	old, err := getUser(t.b, u.ID)
	if err != nil {
		return err
	}
	byEmail := t.b.Bucket(bucketUsersByEmail)
	if old != nil && old.Email != u.Email {
		if err := byEmail.Delete([]byte(old.Email)); err != nil {
			return err
		}
	}
	if err := byEmail.Put([]byte(u.Email), []byte(u.ID)); err != nil {
		return err
	}
	if err := indexPut(t.b.Bucket(bucketUsersIndex), usersScope, u.ID); err != nil {
		return err
	}
	return putJSON(t.b.Bucket(bucketUsers), []byte(u.ID), u)
}

// DeleteUser implements service.AccountTx.
func (t tx) DeleteUser(id string) error {
	u, err := getUser(t.b, id)
	if err != nil || u == nil {
		return err
	}
	for _, wsID := range scopeIDs(t.b.Bucket(bucketMemberships), id) {
		if err := t.DeleteMember(wsID, id); err != nil {
			return err
		}
	}
	if err := t.b.Bucket(bucketUsersByEmail).Delete([]byte(u.Email)); err != nil {
		return err
	}
	if err := indexDelete(t.b.Bucket(bucketUsersIndex), usersScope, id); err != nil {
		return err
	}
	return t.b.Bucket(bucketUsers).Delete([]byte(id))
}

// UserPage implements service.AccountTx.
func (t tx) UserPage(req data.PageRequest) ([]*data.UserRecord, data.Page, error) {
	ids, page, err := t.db.page(t.b, bucketUsersIndex, usersScope, req)
	if err != nil {
		return nil, page, err
	}
	users := make([]*data.UserRecord, 0, len(ids))
	for _, id := range ids {
		u, err := getUser(t.b, id)
		if err != nil {
			return nil, page, err
		}
		if u != nil {
			users = append(users, u)
		}
	}
	return users, page, nil
}

// CountUsers implements service.AccountTx.
func (t tx) CountUsers() (int, error) { return t.b.Bucket(bucketUsers).Stats().KeyN, nil }

// UserRevision implements service.AccountTx.
func (t tx) UserRevision(id string) (uint64, error) {
	return revision(t.b.Bucket(bucketUsers).Get([]byte(id))), nil
}
