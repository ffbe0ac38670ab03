package postgres_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// BenchmarkReplicasCallStart is server's BenchmarkCallStart on VOICEAPI_BENCH_REPLICAS
// replicas (3) of one database, client c's requests going to replica c % n.
// go test ./postgres -run x -bench BenchmarkReplicasCallStart -benchtime 1000x
func BenchmarkReplicasCallStart(b *testing.B) {
	n := 3
	if v, err := strconv.Atoi(os.Getenv("VOICEAPI_BENCH_REPLICAS")); err == nil && v > 0 {
		n = v
	}
	rs := testkit.NewReplicas(b, n, testkit.ReplicaOptions{})
	servers := make([]*testkit.Server, n)
	for i, r := range rs {
		servers[i] = r.Server
	}
	agent := map[string]any{"name": "Bench",
		"prompt_config": map[string]any{"prompt": "Support for {{shop}}; the caller is {{customer_name}}, at {{current_time}}.",
			"welcome_message": "Hi {{customer_name}}.", "default_variables": map[string]any{"shop": "Acme"}}}
	testkit.CallStartBench(b, servers, agent, func(limits map[string]int64) {
		if _, err := rs[0].Svc.Subscriptions.SetSubscription(context.Background(), rs[0].Owner.WorkspaceID, data.SubscriptionSet{Limits: limits}); err != nil {
			b.Fatal(err)
		}
	})
}
