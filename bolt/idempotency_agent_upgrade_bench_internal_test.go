package bolt

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// BenchmarkUpgradeListsAgentAnswers times the schema 21 → 22 fill (indexIdempotencyByAgent)
// over n kept answers of 2 KiB, each with an agent: it runs at open, in the migration's
// one transaction, so a file holding a busy day's answers opens that much later
// (docs/performance.md, "Schema 22's fill at open"). B/op is what the transaction
// allocates, its dirty pages among it.
func BenchmarkUpgradeListsAgentAnswers(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			db, err := Open(dir, Options{NoSync: true, SecretKey: make([]byte, 32)})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			at := data.NewTime(time.Now())
			body := make([]byte, 2048)
			for i := 0; i < n; i += 1000 {
				if err := db.Update(context.Background(), func(tx service.Tx) error {
					for j := i; j < min(i+1000, n); j++ {
						if err := tx.PutIdempotentResponse(int64(1+j%50), fmt.Sprint("k-", j), &data.IdempotentResponse{Status: 201,
							Body: body, CreatedAt: at, AgentID: fmt.Sprintf("agt_01JD60000000000000000%05d", j%100)}); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			benchFill(b, db, bucketIdempotencyByAgent, indexIdempotencyByAgent) // as a schema 21 file: no list
		})
	}
}
