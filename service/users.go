package service

import (
	"bytes"
	"context"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// UserService manages accounts.
type UserService struct{ *base }

var _ data.UserService = (*UserService)(nil)

// loadUser returns an account, not found when there is none.
func loadUser(tx Tx, id string) (*data.UserRecord, error) {
	u, err := tx.User(id)
	if err == nil && u == nil {
		err = data.NotFound("User")
	}
	return u, err
}

// publicUser is the account as responses show it: never its hash.
func publicUser(u *data.UserRecord) *data.User {
	out := u.User
	return &out
}

// Me implements data.UserService.
func (s *UserService) Me(ctx context.Context) (*data.User, error) {
	p := data.PrincipalFrom(ctx)
	var out *data.User
	err := s.store.View(ctx, func(tx Tx) error {
		u, err := loadUser(tx, p.UserID)
		if err != nil {
			return err
		}
		out = publicUser(u)
		out.CurrentWorkspaceID = p.CurrentWorkspaceID
		return nil
	})
	return out, err
}

// UpdateMe implements data.UserService.
func (s *UserService) UpdateMe(ctx context.Context, in data.UserUpdate) (*data.User, error) {
	if err := checkInput(ctx, validate.UserUpdate(in)); err != nil {
		return nil, err
	}
	p := data.PrincipalFrom(ctx)
	// Hash outside the transaction: bcrypt is slow on purpose and would hold the writer.
	// So is the check of current_password, against the hash as read before it: the
	// transaction then refuses the change if that hash is no longer the account's.
	var newHash, checkedHash []byte
	currentMatches := false
	if in.Password.Set {
		var err error
		if newHash, err = bcrypt.GenerateFromPassword([]byte(in.Password.V), s.opts.PasswordCost); err != nil {
			return nil, err
		}
		if err := s.store.View(ctx, func(tx Tx) error {
			u, err := loadUser(tx, p.UserID)
			if err == nil {
				checkedHash = u.PasswordHash
			}
			return err
		}); err != nil {
			return nil, err
		}
		currentMatches = s.passwords.matches(checkedHash, in.CurrentPassword.V)
	}
	var out *data.User
	err := s.store.Update(ctx, func(tx Tx) error {
		u, err := loadUser(tx, p.UserID)
		if err != nil {
			return err
		}
		current := publicUser(u)
		current.CurrentWorkspaceID = p.CurrentWorkspaceID
		if err := data.CheckIfMatch(data.IfMatch(ctx), current); err != nil {
			return err
		}
		before := storedSnapshot(u)
		if in.Password.Set {
			if !currentMatches || !bytes.Equal(u.PasswordHash, checkedHash) {
				return data.CredentialsRefused(data.FieldError("current_password", "The current_password is incorrect."))
			}
			u.PasswordHash = newHash
			if err := s.revokeOtherLogins(tx, u.ID, p.TokenID); err != nil {
				return err
			}
			// In the personal workspace: the account is the user's alone.
			if _, err := s.record(ctx, tx, data.EventUserPasswordChanged, u.PersonalWorkspaceID, map[string]string{"user_id": u.ID}); err != nil {
				return err
			}
		}
		if in.Name.Set {
			u.Name = in.Name.V
		}
		if in.Email.Set {
			if email := validate.NormalizeEmail(in.Email.V); email != u.Email {
				if err := emailFree(tx, email); err != nil {
					return err
				}
				u.Email = email
			}
		}
		if unchangedSince(before, u) {
			out = current
			return errNothingToWrite // nothing changed: no write (unchanged.go)
		}
		u.UpdatedAt = s.timeNow()
		if err := tx.PutUser(u); err != nil {
			return err
		}
		out = publicUser(u)
		out.CurrentWorkspaceID = p.CurrentWorkspaceID
		return nil
	})
	return out, err
}

// ResetPassword sets the password of the account with email without the current one:
// the way back in for an operator who lost it (`voiceapi user reset-password`, on a
// stopped server's data). Every login session of the account ends, as whoever knew the
// old password may hold one; API keys stay, revoked one by one. The reset is recorded as
// user.password_changed, by the system, in the account's personal workspace. Errors:
// not_found, validation_failed.
func (s *UserService) ResetPassword(ctx context.Context, email, password string) (*data.User, error) {
	if err := checkInput(ctx, validate.NewPassword(password)); err != nil {
		return nil, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.opts.PasswordCost)
	if err != nil {
		return nil, err
	}
	var out *data.User
	err = s.store.Update(ctx, func(tx Tx) error {
		u, err := tx.UserByEmail(validate.NormalizeEmail(email))
		if err != nil {
			return err
		}
		if u == nil {
			return data.NotFound("User")
		}
		u.PasswordHash = hash
		u.UpdatedAt = s.timeNow()
		if err := s.revokeOtherLogins(tx, u.ID, 0); err != nil {
			return err
		}
		if _, err := s.record(ctx, tx, data.EventUserPasswordChanged, u.PersonalWorkspaceID, map[string]string{"user_id": u.ID}); err != nil {
			return err
		}
		if err := tx.PutUser(u); err != nil {
			return err
		}
		out = publicUser(u)
		return nil
	})
	return out, err
}

// revokeOtherLogins ends every login session of the user but the one making the change
// (keep; 0 keeps none), so that a new password locks out whoever knew the old one. API
// keys stay: they are revoked one by one (docs/api.md).
func (b *base) revokeOtherLogins(tx Tx, userID string, keep int64) error {
	logins, err := tx.UserTokens(userID, data.TokenLogin)
	if err != nil {
		return err
	}
	others := logins[:0]
	for _, k := range logins {
		if k.ID != keep {
			others = append(others, k)
		}
	}
	return b.deleteTokens(tx, others)
}

// emailFree refuses an email another account has.
func emailFree(tx Tx, email string) error {
	taken, err := tx.UserByEmail(email)
	if err != nil {
		return err
	}
	if taken != nil {
		return data.Errorf(data.ECONFLICT, "The email %s is already taken.", email)
	}
	return nil
}

// ListUsers implements data.UserService.
func (s *UserService) ListUsers(ctx context.Context, req data.PageRequest) ([]*data.User, data.Page, error) {
	var users []*data.User
	var page data.Page
	err := s.store.View(ctx, func(tx Tx) error {
		list, pg, err := tx.UserPage(req)
		page = pg
		for _, u := range list {
			users = append(users, publicUser(u))
		}
		return err
	})
	return users, page, err
}

// CreateUser implements data.UserService.
func (s *UserService) CreateUser(ctx context.Context, in data.UserCreate) (*data.User, error) {
	if err := checkInput(ctx, validate.UserCreate(in)); err != nil {
		return nil, err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(in.Password), s.opts.PasswordCost)
	if err != nil {
		return nil, err
	}
	email := validate.NormalizeEmail(in.Email)
	var out *data.User
	err = s.store.Update(ctx, func(tx Tx) error {
		if err := emailFree(tx, email); err != nil {
			return err
		}
		now := s.timeNow()
		u := &data.UserRecord{User: data.User{
			ID: s.ids.New(data.PrefixUser), Name: in.Name, Email: email, IsAdmin: in.IsAdmin,
			CreatedAt: now, UpdatedAt: now,
		}, PasswordHash: hash}
		ws, err := s.insertWorkspace(tx, u.ID, data.WorkspaceCreate{Name: in.Name + "'s workspace", Description: "Personal workspace"}, u.ID)
		if err != nil {
			return err
		}
		u.PersonalWorkspaceID = ws.ID
		if err := tx.PutUser(u); err != nil {
			return err
		}
		out = publicUser(u)
		answerClaim(ctx, out, nil)
		return nil
	})
	return out, err
}

// User implements data.UserService.
func (s *UserService) User(ctx context.Context, id string) (*data.User, error) {
	var out *data.User
	err := s.store.View(ctx, func(tx Tx) error {
		u, err := loadUser(tx, id)
		if err == nil {
			out = publicUser(u)
		}
		return err
	})
	return out, err
}

// UserByEmail returns an account by email (the CLI). Errors: not_found.
func (s *UserService) UserByEmail(ctx context.Context, email string) (*data.User, error) {
	var out *data.User
	err := s.store.View(ctx, func(tx Tx) error {
		u, err := tx.UserByEmail(validate.NormalizeEmail(email))
		if err != nil {
			return err
		}
		if u == nil {
			return data.NotFound("User")
		}
		out = publicUser(u)
		return nil
	})
	return out, err
}

// CountUsers implements data.UserService.
func (s *UserService) CountUsers(ctx context.Context) (int, error) {
	n := 0
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		n, err = tx.CountUsers()
		return err
	})
	return n, err
}

// DeleteUser implements data.UserService.
func (s *UserService) DeleteUser(ctx context.Context, id string) error {
	return s.store.Update(ctx, func(tx Tx) error {
		u, err := loadUser(tx, id)
		if err != nil {
			return err
		}
		if err := data.CheckIfMatch(data.IfMatch(ctx), publicUser(u)); err != nil {
			return err
		}
		// Refuse before changing anything: an administrator keeps their own account, the
		// instance an administrator, and a workspace an owner.
		if data.DeletesOwnAccount(data.PrincipalFrom(ctx), id) {
			return data.FieldError("id", data.OwnAccountKept)
		}
		if last, err := lastAdmin(tx, u); err != nil {
			return err
		} else if last {
			return data.FieldError("id", "The user is the instance's last administrator; make another administrator first.")
		}
		workspaces, err := tx.MemberWorkspaces(id)
		if err != nil {
			return err
		}
		for _, wsID := range workspaces {
			if wsID == u.PersonalWorkspaceID {
				continue
			}
			if last, err := lastOwner(tx, wsID, id); err != nil {
				return err
			} else if last {
				return data.FieldError("id", "The user is the last owner of workspace "+wsID+"; make someone else an owner first.")
			}
		}
		tx.OnCommit(func() { s.kbIndexes.dropWorkspace(u.PersonalWorkspaceID) })
		// The personal workspace's delete takes what was kept in it and under its
		// tokens; what the user's other tokens kept goes with them, in one batch.
		others, err := userTokens(tx, id, func(k *data.APIKeyRecord) bool { return k.WorkspaceID != u.PersonalWorkspaceID })
		if err != nil {
			return err
		}
		cut := newKeptCut()
		if err := s.deleteWorkspace(tx, u.PersonalWorkspaceID, cut); err != nil {
			return err
		}
		if err := tx.DeleteUser(id); err != nil {
			return err
		}
		if err := cut.tokens(tx, others); err != nil {
			return err
		}
		return cut.queue(s.base, tx)
	})
}

// lastAdmin reports whether u is the instance's only administrator. Over the API it never
// is (the caller is another administrator, and may not delete their own account); a
// caller without a principal (an operator's command) meets the same rule. Only an
// administrator's delete pages the accounts, and stops at the first other one.
func lastAdmin(tx Tx, u *data.UserRecord) (bool, error) {
	if !u.IsAdmin {
		return false, nil
	}
	req := data.PageRequest{PerPage: data.MaxPerPage}
	for {
		users, page, err := tx.UserPage(req)
		if err != nil {
			return false, err
		}
		for _, o := range users {
			if o.IsAdmin && o.ID != u.ID {
				return false, nil
			}
		}
		if page.NextCursor == nil {
			return true, nil
		}
		req.Cursor = *page.NextCursor
	}
}
