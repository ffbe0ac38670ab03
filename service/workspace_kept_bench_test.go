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

// BenchmarkWorkspaceDeleteTakesKeptAnswers: a workspace's delete with n answers kept for
// requests made in it, half under a token bound to it, half under a visitor's token
// bound to another workspace; the first service.TokenKeptDeleteBatch deleted in the
// delete's transaction, jobs queued for the rest (not run) (docs/performance.md, "A
// workspace's delete"). Either engine (VOICEAPI_TEST_BACKEND).
func BenchmarkWorkspaceDeleteTakesKeptAnswers(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			env := testkit.New(b, nil)
			u := mustUser(b, env.Svc, "bench@example.com")
			body := make([]byte, 2048) // an answer, sealed
			for b.Loop() {
				b.StopTimer()
				ws, err := env.Svc.Workspaces.CreateWorkspace(ownerCtx(u.ID, u.PersonalWorkspaceID), data.WorkspaceCreate{Name: "Bench"})
				if err != nil {
					b.Fatal(err)
				}
				var tokens []int64
				if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
					for _, bound := range []string{ws.ID, u.PersonalWorkspaceID} {
						k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "login", CreatedAt: data.NewTime(time.Now())},
							UserID: u.ID, WorkspaceID: bound, Kind: data.TokenLogin, SecretHash: []byte("h")}
						if err := tx.InsertAPIKey(k); err != nil {
							return err
						}
						tokens = append(tokens, k.ID)
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				now := data.NewTime(time.Now())
				for i := 0; i < n; i += 500 {
					if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
						for j := i; j < min(i+500, n); j++ {
							if err := tx.PutIdempotentResponse(tokens[j%2], fmt.Sprint("k-", j), &data.IdempotentResponse{Status: 201, Body: body,
								CreatedAt: now, WorkspaceID: ws.ID}); err != nil {
								return err
							}
						}
						return nil
					}); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if err := env.Svc.Workspaces.DeleteWorkspace(ownerCtx(u.ID, ws.ID), ws.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
