package postgres

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
)

// userCols are the columns scanUser reads, in its order.
const userCols = `id, email, name, is_admin, personal_workspace_id, password_hash, created_at, updated_at`

// scanUser reads one row of userCols.
func scanUser(row pgx.Row) (*data.UserRecord, error) {
	var u data.UserRecord
	var created, updated time.Time
	if err := row.Scan(&u.ID, &u.Email, &u.Name, &u.IsAdmin, &u.PersonalWorkspaceID, &u.PasswordHash, &created, &updated); err != nil {
		return nil, err
	}
	u.CreatedAt, u.UpdatedAt = data.NewTime(created), data.NewTime(updated)
	return &u, nil
}

// oneUser returns the user a one-row query selects, nil when none.
func (t *tx) oneUser(sql string, args ...any) (*data.UserRecord, error) {
	u, err := scanUser(t.queryRow(sql, args...))
	if err != nil {
		return nil, noRows(err)
	}
	return u, nil
}

// User implements service.AccountTx.
func (t *tx) User(id string) (*data.UserRecord, error) {
	return t.oneUser(`SELECT `+userCols+` FROM users WHERE id = $1`, id)
}

// UserByEmail implements service.AccountTx.
func (t *tx) UserByEmail(email string) (*data.UserRecord, error) {
	return t.oneUser(`SELECT `+userCols+` FROM users WHERE email = $1`, email)
}

// PutUser implements service.AccountTx. The email column is UNIQUE: the service checks
// that an email is free, and the constraint keeps two replicas from both taking it.
func (t *tx) PutUser(u *data.UserRecord) error {
	hash := u.PasswordHash
	if hash == nil {
		hash = []byte{}
	}
	_, err := t.exec(`INSERT INTO users (`+userCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (id) DO UPDATE SET email = excluded.email, name = excluded.name,
			is_admin = excluded.is_admin, personal_workspace_id = excluded.personal_workspace_id,
			password_hash = excluded.password_hash, created_at = excluded.created_at,
			updated_at = excluded.updated_at, revision = nextval('account_revisions')`,
		u.ID, u.Email, u.Name, u.IsAdmin, u.PersonalWorkspaceID, hash, u.CreatedAt.Time, u.UpdatedAt.Time)
	return err
}

// DeleteUser implements service.AccountTx: the account, its memberships and every token
// of it.
func (t *tx) DeleteUser(id string) error {
	for _, sql := range []string{
		`DELETE FROM api_keys WHERE user_id = $1`,
		`DELETE FROM members WHERE user_id = $1`,
		`DELETE FROM users WHERE id = $1`,
	} {
		if _, err := t.exec(sql, id); err != nil {
			return err
		}
	}
	return nil
}

// UserPage implements service.AccountTx.
func (t *tx) UserPage(req data.PageRequest) ([]*data.UserRecord, data.Page, error) {
	ks := keyset{binding: binding("users"), cols: userCols, from: `users WHERE TRUE`, key: "id"}
	return pageRows(t, ks, req, func(rows pgx.Rows) (*data.UserRecord, string, error) {
		u, err := scanUser(rows)
		if err != nil {
			return nil, "", err
		}
		return u, u.ID, nil
	})
}

// CountUsers implements service.AccountTx.
func (t *tx) CountUsers() (int, error) {
	var n int
	err := t.queryRow(`SELECT count(*) FROM users`).Scan(&n)
	return n, err
}

// UserRevision implements service.AccountTx.
func (t *tx) UserRevision(id string) (uint64, error) {
	return t.accountRevision(`SELECT revision FROM users WHERE id = $1`, id)
}

// accountRevision reads a revision column by a one-row query; 0 when there is no row.
func (t *tx) accountRevision(sql string, args ...any) (uint64, error) {
	var rev int64
	if err := t.queryRow(sql, args...).Scan(&rev); err != nil {
		return 0, noRows(err)
	}
	return uint64(rev), nil
}
