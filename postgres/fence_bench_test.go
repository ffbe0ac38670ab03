package postgres_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// BenchmarkSchemaVersionCheck is the fence's reading (fence.go), which each replica makes
// once a second and /readyz makes in place of its former empty ping, beside that ping:
// the cost of a replica stepping aside on its own (docs/performance.md).
//
//	go test -run '^$' -bench BenchmarkSchemaVersionCheck -benchtime 2000x -count 5 ./postgres
func BenchmarkSchemaVersionCheck(b *testing.B) {
	db := testkit.OpenPostgres(b, nil)
	ctx := context.Background()
	b.Run("empty_ping", func(b *testing.B) {
		for b.Loop() {
			if err := db.Pool().Ping(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("schema_version", func(b *testing.B) {
		for b.Loop() {
			if err := db.Ping(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
