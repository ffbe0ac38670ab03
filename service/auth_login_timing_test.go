package service_test

import (
	"context"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// A login with an unknown email compares the password against a hash of the same bcrypt
// cost as a known account's, so its time does not tell whether the email has an account
// (conventions §5: nothing is enumerable). The dummy hash was once made at the lowest
// cost: an unknown email answered in a millisecond, a known one in a third of a second.
func TestLoginUnknownEmailCostsAsMuchAsAWrongPassword(t *testing.T) {
	const cost = bcrypt.MinCost + 1 // a cost of its own, so the lowest one is told apart
	env := testkit.New(t, func(o *bolt.Options) { o.PasswordCost = cost })
	env.User(t, "known@example.com")
	var costs []int
	service.SetPasswordCompareHook(env.Svc, func(hash []byte) {
		c, err := bcrypt.Cost(hash)
		if err != nil {
			t.Errorf("compared against a hash that is none: %v", err)
		}
		costs = append(costs, c)
	})
	for _, email := range []string{"known@example.com", "unknown@example.com"} {
		costs = nil
		_, _, err := env.Svc.Auth.Login(context.Background(), email, "not-the-password", nil)
		if data.ErrorCode(err) != data.EINVALID {
			t.Fatalf("login as %s with a wrong password: %v, want validation_failed", email, err)
		}
		if len(costs) != 1 || costs[0] != cost {
			t.Errorf("login as %s compared against hashes of cost %v, want one of %d", email, costs, cost)
		}
	}
}
