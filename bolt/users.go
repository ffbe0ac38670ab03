package bolt

import (
	"context"

	"go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

var _ data.UserService = (*DB)(nil)

// userRow is an account as stored, with its bcrypt hash.
type userRow struct {
	data.User
	PasswordHash []byte `json:"password_hash"`
}

// usersScope is the one scope of users_index: every account.
const usersScope = "all"

func userByEmail(tx *bbolt.Tx, email string, row *userRow) (bool, error) {
	id := tx.Bucket(bucketUsersByEmail).Get([]byte(email))
	if id == nil {
		return false, nil
	}
	return getJSON(tx.Bucket(bucketUsers), id, row)
}

func loadUser(tx *bbolt.Tx, id string) (*userRow, error) {
	var row userRow
	found, err := getJSON(tx.Bucket(bucketUsers), []byte(id), &row)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, data.NotFound("User")
	}
	return &row, nil
}

func publicUser(row *userRow) *data.User {
	u := row.User
	return &u
}

// Me implements data.UserService.
func (db *DB) Me(ctx context.Context) (*data.User, error) {
	p := data.PrincipalFrom(ctx)
	var u *data.User
	err := db.view(func(tx *bbolt.Tx) error {
		row, err := loadUser(tx, p.UserID)
		if err != nil {
			return err
		}
		u = publicUser(row)
		u.CurrentWorkspaceID = p.CurrentWorkspaceID
		return nil
	})
	return u, err
}

// UpdateMe implements data.UserService.
func (db *DB) UpdateMe(ctx context.Context, in data.UserUpdate) (*data.User, error) {
	if err := validate.UserUpdate(in); err != nil {
		return nil, err
	}
	p := data.PrincipalFrom(ctx)
	// Hash outside the transaction: bcrypt is slow on purpose and would hold the writer.
	var newHash []byte
	if in.Password.Set {
		var err error
		if newHash, err = bcrypt.GenerateFromPassword([]byte(in.Password.V), db.opts.PasswordCost); err != nil {
			return nil, err
		}
	}
	var u *data.User
	err := db.update(func(tx *bbolt.Tx) error {
		row, err := loadUser(tx, p.UserID)
		if err != nil {
			return err
		}
		current := publicUser(row)
		current.CurrentWorkspaceID = p.CurrentWorkspaceID
		if err := data.CheckIfMatch(data.IfMatch(ctx), current); err != nil {
			return err
		}
		if in.Password.Set {
			if bcrypt.CompareHashAndPassword(row.PasswordHash, []byte(in.CurrentPassword.V)) != nil {
				return data.FieldError("current_password", "The current_password is incorrect.")
			}
			row.PasswordHash = newHash
		}
		if in.Name.Set {
			row.Name = in.Name.V
		}
		if in.Email.Set {
			email := validate.NormalizeEmail(in.Email.V)
			if email != row.Email {
				byEmail := tx.Bucket(bucketUsersByEmail)
				if byEmail.Get([]byte(email)) != nil {
					return data.Errorf(data.ECONFLICT, "The email %s is already taken.", email)
				}
				if err := byEmail.Delete([]byte(row.Email)); err != nil {
					return err
				}
				if err := byEmail.Put([]byte(email), []byte(row.ID)); err != nil {
					return err
				}
				row.Email = email
			}
		}
		row.UpdatedAt = db.timeNow()
		if err := putJSON(tx.Bucket(bucketUsers), []byte(row.ID), row); err != nil {
			return err
		}
		u = publicUser(row)
		u.CurrentWorkspaceID = p.CurrentWorkspaceID
		return nil
	})
	return u, err
}

// ListUsers implements data.UserService.
func (db *DB) ListUsers(ctx context.Context, req data.PageRequest) ([]*data.User, data.Page, error) {
	var users []*data.User
	var page data.Page
	err := db.view(func(tx *bbolt.Tx) error {
		ids, pg, err := db.page(tx, bucketUsersIndex, usersScope, req)
		if err != nil {
			return err
		}
		page = pg
		for _, id := range ids {
			row, err := loadUser(tx, id)
			if err != nil {
				return err
			}
			users = append(users, publicUser(row))
		}
		return nil
	})
	return users, page, err
}

// CreateUser implements data.UserService.
func (db *DB) CreateUser(ctx context.Context, in data.UserCreate) (*data.User, error) {
	if err := validate.UserCreate(in); err != nil {
		return nil, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), db.opts.PasswordCost)
	if err != nil {
		return nil, err
	}
	email := validate.NormalizeEmail(in.Email)
	var u *data.User
	err = db.update(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketUsersByEmail).Get([]byte(email)) != nil {
			return data.Errorf(data.ECONFLICT, "The email %s is already taken.", email)
		}
		now := db.timeNow()
		row := &userRow{User: data.User{
			ID: db.ids.New(data.PrefixUser), Name: in.Name, Email: email, IsAdmin: in.IsAdmin,
			CreatedAt: now, UpdatedAt: now,
		}, PasswordHash: hash}
		ws, err := db.insertWorkspace(tx, row.ID, data.WorkspaceCreate{Name: in.Name + "'s workspace", Description: "Personal workspace"}, row.ID)
		if err != nil {
			return err
		}
		row.PersonalWorkspaceID = ws.ID
		if err := putJSON(tx.Bucket(bucketUsers), []byte(row.ID), row); err != nil {
			return err
		}
		if err := tx.Bucket(bucketUsersByEmail).Put([]byte(email), []byte(row.ID)); err != nil {
			return err
		}
		if err := indexPut(tx.Bucket(bucketUsersIndex), usersScope, row.ID); err != nil {
			return err
		}
		u = publicUser(row)
		return nil
	})
	return u, err
}

// User implements data.UserService.
func (db *DB) User(ctx context.Context, id string) (*data.User, error) {
	var u *data.User
	err := db.view(func(tx *bbolt.Tx) error {
		row, err := loadUser(tx, id)
		if err == nil {
			u = publicUser(row)
		}
		return err
	})
	return u, err
}

// UserByEmail returns an account by email (the CLI).
func (db *DB) UserByEmail(ctx context.Context, email string) (*data.User, error) {
	var u *data.User
	err := db.view(func(tx *bbolt.Tx) error {
		var row userRow
		found, err := userByEmail(tx, validate.NormalizeEmail(email), &row)
		if err != nil {
			return err
		}
		if !found {
			return data.NotFound("User")
		}
		u = publicUser(&row)
		return nil
	})
	return u, err
}

// CountUsers implements data.UserService.
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	n := 0
	err := db.view(func(tx *bbolt.Tx) error {
		n = tx.Bucket(bucketUsers).Stats().KeyN
		return nil
	})
	return n, err
}

// DeleteUser implements data.UserService.
func (db *DB) DeleteUser(ctx context.Context, id string) error {
	return db.update(func(tx *bbolt.Tx) error {
		row, err := loadUser(tx, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), publicUser(row)); err != nil {
			return err
		}
		// Refuse before changing anything: a workspace must keep an owner.
		for _, wsID := range scopeIDs(tx.Bucket(bucketMemberships), id) {
			if wsID == row.PersonalWorkspaceID {
				continue
			}
			m, err := loadMember(tx, wsID, id)
			if err != nil {
				return err
			}
			if m.Role == data.RoleOwner && countOwners(tx, wsID) == 1 {
				return data.FieldError("id", "The user is the last owner of workspace "+wsID+"; make someone else an owner first.")
			}
		}
		if err := db.deleteWorkspaceTx(ctx, tx, row.PersonalWorkspaceID); err != nil {
			return err
		}
		for _, wsID := range scopeIDs(tx.Bucket(bucketMemberships), id) {
			if err := deleteMember(tx, wsID, id); err != nil {
				return err
			}
			if err := deleteWorkspaceTokens(tx, wsID, func(r *apiKeyRow) bool { return r.UserID == id }); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketUsersByEmail).Delete([]byte(row.Email)); err != nil {
			return err
		}
		if err := indexDelete(tx.Bucket(bucketUsersIndex), usersScope, id); err != nil {
			return err
		}
		return tx.Bucket(bucketUsers).Delete([]byte(id))
	})
}
