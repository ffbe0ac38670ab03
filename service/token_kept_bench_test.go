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

// BenchmarkTokenDeleteTakesKeptAnswers: an API key's revoke with n answers kept under
// it, the first service.TokenKeptDeleteBatch deleted in the revoke's transaction, a job
// queued for the rest (not run) (docs/performance.md, "A token's delete"). Either
// engine (VOICEAPI_TEST_BACKEND).
func BenchmarkTokenDeleteTakesKeptAnswers(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			env := testkit.New(b, nil)
			ctx := owner(b, env, "bench@example.com")
			body := make([]byte, 2048) // an answer, sealed
			for b.Loop() {
				b.StopTimer()
				key, _, err := env.Svc.Auth.CreateAPIKey(ctx, data.APIKeyCreate{Name: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				now := data.NewTime(time.Now())
				for i := 0; i < n; i += 500 {
					if err := env.Store.Update(context.Background(), func(tx service.Tx) error {
						for j := i; j < min(i+500, n); j++ {
							if err := tx.PutIdempotentResponse(key.ID, fmt.Sprint("k-", j), &data.IdempotentResponse{Status: 201, Body: body,
								CreatedAt: now}); err != nil {
								return err
							}
						}
						return nil
					}); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if err := env.Svc.Auth.DeleteAPIKey(ctx, key.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
