package service

import (
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// passwordChecker compares passwords with their stored bcrypt hashes, for logins and for
// a password change's current_password.
type passwordChecker struct {
	cost int
	// dummy is the hash a login with an unknown email is compared against, made once at
	// the stored passwords' cost so that such a login takes as long as a wrong password.
	dummyOnce sync.Once
	dummy     []byte
	// hook, when set (tests), sees each hash a password is compared against.
	hook func(hash []byte)
}

// matches reports whether password is hash's; for a nil hash (no such account) it
// compares against a hash of the stored passwords' cost and reports false, so that the
// time of a login does not tell whether its email has an account. It is slow on purpose:
// never call it inside a write transaction, which it would hold for as long.
func (c *passwordChecker) matches(hash []byte, password string) bool {
	known := hash != nil
	if !known {
		c.dummyOnce.Do(func() {
			c.dummy, _ = bcrypt.GenerateFromPassword([]byte("voiceapi-dummy-password"), c.cost)
		})
		hash = c.dummy
	}
	if c.hook != nil {
		c.hook(hash)
	}
	return bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil && known
}
