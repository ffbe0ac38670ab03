package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// TestDeletedTokensKeptAnswersGoInBatches: the pass over expired tokens deletes what the
// tokens kept under Idempotency-Keys, the first service.TokenKeptDeleteBatch in its own
// transaction, shared by the tokens; once it is spent, a further token has one answer
// deleted, and each token with answers left gets the job that deletes the rest; a
// token that kept nothing gets no job; a live token's answers stay. Both engines.
func TestDeletedTokensKeptAnswersGoInBatches(t *testing.T) {
	env := testkit.New(t, nil)
	p := data.PrincipalFrom(owner(t, env, "tokens@example.com"))
	past := data.NewTime(time.Now().Add(-time.Hour))
	var many, few, none, live int64
	counts := map[*int64]int{&many: service.TokenKeptDeleteBatch + 5, &few: 3, &none: 0, &live: 2}
	if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
		for _, id := range []*int64{&many, &few, &none, &live} {
			k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "login", CreatedAt: past, ExpiresAt: &past},
				UserID: p.UserID, WorkspaceID: p.WorkspaceID, Kind: data.TokenLogin, SecretHash: []byte("h")}
			if id == &live {
				future := data.NewTime(time.Now().Add(time.Hour))
				k.ExpiresAt = &future
			}
			if err := tx.InsertAPIKey(k); err != nil {
				return err
			}
			*id = k.ID
			for i := range counts[id] {
				if err := tx.PutIdempotentResponse(k.ID, fmt.Sprint("k-", i), &data.IdempotentResponse{Status: 201,
					Body: []byte("a token shown once"), CreatedAt: data.NewTime(time.Now())}); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	left := func(id int64) int {
		t.Helper()
		n := 0
		if err := env.Store.View(context.Background(), func(tx service.Tx) error {
			for i := range service.TokenKeptDeleteBatch + 5 {
				r, err := tx.IdempotentResponse(id, fmt.Sprint("k-", i))
				if err != nil {
					return err
				}
				if r != nil {
					n++
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := env.Svc.Auth.PruneTokens(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a, b := left(many), left(few); a+b != counts[&many]+counts[&few]-service.TokenKeptDeleteBatch-1 || a == counts[&many] && b == counts[&few] {
		t.Fatalf("after the pass's transaction, %d and %d kept; want %d in all, the batch and one more taken", a, b,
			counts[&many]+counts[&few]-service.TokenKeptDeleteBatch-1)
	}
	runner := env.Svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindDeleteTokenAnswers}})
	ran := 0
	for {
		n, err := runner.RunDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		ran += n
	}
	if ran != 2 {
		t.Fatalf("ran %d jobs; want one for each token with answers left", ran)
	}
	for name, id := range map[string]int64{"many": many, "few": few, "none": none} {
		if n := left(id); n != 0 {
			t.Errorf("the expired token with %s answers: %d kept after the job; want none", name, n)
		}
	}
	if n := left(live); n != counts[&live] {
		t.Errorf("the live token: %d kept; want its %d", n, counts[&live])
	}
}
