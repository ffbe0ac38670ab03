package postgres_test

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
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

// BenchmarkWriteTransaction is the fixed cost of a write transaction: an Update whose one
// statement reads (so its COMMIT flushes no WAL, which would hide the rest), with a
// caller's workspace (its lock taken before BEGIN, as a request's) and without (a job's, a
// sweep's). The fence's lock and read with BEGIN show here (docs/performance.md, fence2).
//
//	go test -run '^$' -bench BenchmarkWriteTransaction -benchtime 3000x -count 3 ./postgres
func BenchmarkWriteTransaction(b *testing.B) {
	db := testkit.OpenPostgres(b, nil)
	const ws = "ws_01M8PJKXCQAW2M68WVPKBZQC82"
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{
		{"workspace_lock", data.WithPrincipal(context.Background(), &data.Principal{CurrentWorkspaceID: ws})},
		{"no_lock", context.Background()},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := db.Update(c.ctx, func(tx service.Tx) error { _, err := tx.Workspace(ws); return err }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
