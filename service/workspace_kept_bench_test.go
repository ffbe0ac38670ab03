package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/bolt"
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

// BenchmarkRemovalJobPassesOverAnswersKeptSince: the job of a member's removal, with
// 4,000 answers kept by the removal (its transaction takes 1,000, the job 3,000 in 3
// batches) and n kept since by the member added again, before them in key order, which
// the job passes over (docs/performance.md, "A member's removal's job"). Only the job's
// run is timed. Either engine (VOICEAPI_TEST_BACKEND).
func BenchmarkRemovalJobPassesOverAnswersKeptSince(b *testing.B) {
	for _, n := range []int{0, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			clock := &movableClock{t: time.Now().UTC()}
			env := testkit.New(b, func(o *bolt.Options) { o.Now = clock.now })
			u := mustUser(b, env.Svc, "bench@example.com")
			v := mustUser(b, env.Svc, "bench-member@example.com")
			body := make([]byte, 2048) // an answer, sealed
			runner := env.Svc.Jobs.NewRunner(service.RunnerOptions{Workers: 1, Kinds: []string{service.JobKindDeleteTokenAnswers}})
			for b.Loop() {
				b.StopTimer()
				ws, err := env.Svc.Workspaces.CreateWorkspace(ownerCtx(u.ID, u.PersonalWorkspaceID), data.WorkspaceCreate{Name: "Bench"})
				if err != nil {
					b.Fatal(err)
				}
				wctx := ownerCtx(u.ID, ws.ID)
				add := func() {
					if _, err := env.Svc.WorkspaceUsers.AddWorkspaceUser(wctx, ws.ID, data.WorkspaceUserAdd{ID: v.ID, Role: data.RoleAdmin}); err != nil {
						b.Fatal(err)
					}
				}
				add()
				var token int64
				if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
					k := &data.APIKeyRecord{APIKey: data.APIKey{Name: "login", CreatedAt: data.NewTime(clock.now())},
						UserID: v.ID, WorkspaceID: v.PersonalWorkspaceID, Kind: data.TokenLogin, SecretHash: []byte("h")}
					err := tx.InsertAPIKey(k)
					token = k.ID
					return err
				}); err != nil {
					b.Fatal(err)
				}
				keep := func(prefix string, count int) {
					for i := 0; i < count; i += 500 {
						if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
							for j := i; j < min(i+500, count); j++ {
								if err := tx.PutIdempotentResponse(token, fmt.Sprintf("%s-%05d", prefix, j), &data.IdempotentResponse{Status: 201,
									Body: body, CreatedAt: data.NewTime(clock.now()), WorkspaceID: ws.ID}); err != nil {
									return err
								}
							}
							return nil
						}); err != nil {
							b.Fatal(err)
						}
					}
				}
				keep("k", 4*service.TokenKeptDeleteBatch)
				if err := env.Svc.WorkspaceUsers.RemoveWorkspaceUser(wctx, ws.ID, v.ID); err != nil {
					b.Fatal(err)
				}
				clock.add(time.Second)
				add()
				keep("a", n)
				b.StartTimer()
				if ran, err := runner.RunDue(context.Background()); err != nil || ran != 1 {
					b.Fatalf("ran %d jobs (%v); want the removal's one", ran, err)
				}
			}
		})
	}
}
