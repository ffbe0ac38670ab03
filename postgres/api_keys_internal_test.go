package postgres

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
)

// The token pass reads the index api_keys_by_expiry (migration 0025), not every token.
func TestExpiredTokensReadTheirIndex(t *testing.T) {
	plan := queryPlan(t, deleteExpiredTokensSQL, data.TokenLogin, time.Now(), 256)
	if !strings.Contains(plan, "api_keys_by_expiry") {
		t.Errorf("the token pass does not read api_keys_by_expiry:\n%s", plan)
	}
}
