package service_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// BenchmarkSuppressionAdd: one number added to a list of 0, 100,000 and the bound less
// some room, on the engine the tests run on (bbolt with fsync, as production runs it).
// Every add reads the list's count in its transaction to hold the bound; this shows what
// that costs as the list grows (nothing, with the count kept beside the list).
func BenchmarkSuppressionAdd(b *testing.B) {
	for _, listed := range []int{0, validate.MaxSuppressionImport, validate.MaxSuppressions - 100_000} {
		b.Run(fmt.Sprintf("listed=%d", listed), func(b *testing.B) {
			var store service.Store
			if testkit.OnPostgres() {
				store = testkit.OpenEngine(b)
			} else {
				store = testkit.OpenDB(b, func(o *bolt.Options) { o.NoSync = false })
			}
			svc := testkit.Services(b, store, nil)
			u, err := svc.Users.CreateUser(context.Background(), data.UserCreate{Name: "Bench", Email: "bench@example.com", Password: "password-bench"})
			if err != nil {
				b.Fatal(err)
			}
			ctx := testkit.As(u)
			for first := 0; first < listed; first += validate.MaxSuppressionImport {
				rows := make([]data.SuppressionCreate, min(validate.MaxSuppressionImport, listed-first))
				for i := range rows {
					rows[i].PhoneNumber = fmt.Sprintf("+1415%07d", 2_000_000+first+i)
				}
				if _, err := svc.Suppressions.ImportSuppressions(ctx, rows); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			for b.Loop() {
				i++
				if _, added, err := svc.Suppressions.AddSuppression(ctx, data.SuppressionCreate{PhoneNumber: fmt.Sprintf("+1212%07d", 2_000_000+i)}); err != nil || !added {
					b.Fatalf("add %d: %v, %v", i, added, err)
				}
			}
		})
	}
}
