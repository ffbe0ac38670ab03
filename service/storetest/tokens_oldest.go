package storetest

import (
	"slices"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

func init() {
	suites = append(suites, suite{"tokens_oldest", testOldestTokens})
}

// OldestTokens gives a user's tokens of one kind past its newest keep, oldest first, at
// most limit: never another kind's, another user's, or one of the newest keep. Around
// the edges: keep equal to the count, one less, none; limit short of the excess.
func testOldestTokens(t *testing.T, open Opener) {
	s := open(t)
	var logins, keys []int64
	update(t, s, func(tx service.Tx) error {
		for i := range 5 {
			k := tokenExpiring(data.TokenLogin, nil)
			if err := tx.InsertAPIKey(k); err != nil {
				return err
			}
			logins = append(logins, k.ID)
			other := tokenExpiring(data.TokenAPIKey, nil)
			if i%2 == 0 {
				other.UserID = "usr_2"
			}
			if err := tx.InsertAPIKey(other); err != nil {
				return err
			}
			if i%2 != 0 {
				keys = append(keys, other.ID)
			}
		}
		return nil
	})
	for _, c := range []struct {
		kind        string
		keep, limit int
		want        []int64
	}{
		{data.TokenLogin, 5, 10, nil},
		{data.TokenLogin, 6, 10, nil},
		{data.TokenLogin, 4, 10, logins[:1]},
		{data.TokenLogin, 2, 10, logins[:3]},
		{data.TokenLogin, 2, 2, logins[:2]},
		{data.TokenLogin, 0, 10, logins},
		{data.TokenAPIKey, 1, 10, keys[:1]},
		{data.TokenAPIKey, 0, 10, keys},
	} {
		view(t, s, func(tx service.Tx) error {
			got, err := tx.OldestTokens("usr_1", c.kind, c.keep, c.limit)
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("OldestTokens(%s, keep %d, limit %d) = %v, %v; want %v", c.kind, c.keep, c.limit, got, err, c.want)
			}
			return nil
		})
	}
	view(t, s, func(tx service.Tx) error {
		if got, err := tx.OldestTokens("usr_3", data.TokenLogin, 0, 10); err != nil || len(got) != 0 {
			t.Errorf("a user without tokens: %v, %v", got, err)
		}
		return nil
	})
}
