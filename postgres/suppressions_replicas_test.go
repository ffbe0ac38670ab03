package postgres_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/internal/testkit"
	"github.com/voiceapi/voiceapi/service"
)

// Three replicas take list imports and workspace imports of one workspace's suppression
// list at once, near its bound (lowered to 30): each is whole or a 422, never a 5xx, and
// the list ends holding the numbers of exactly the writes that succeeded, within the bound.
func TestReplicasHoldTheSuppressionBound(t *testing.T) {
	const bound, listed, writers, each = 30, 20, 9, 4
	rs := threeReplicas(t, testkit.ReplicaOptions{Prepare: func(svc *service.Services) { svc.LowerSuppressionBound(bound) }})
	owner, ws := rs[0].Owner.Token, rs[0].Owner.WorkspaceID
	rows := func(first, n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"phone_number": fmt.Sprintf("+1415555%04d", first+i)}
		}
		return out
	}
	testkit.Expect(t, rs[0].Do("POST", "/api/v1/suppressions/import", owner, map[string]any{"rows": rows(0, listed)}), 200)

	var wg sync.WaitGroup
	var mu sync.Mutex
	succeeded := 0
	for w := range writers {
		wg.Go(func() {
			r := rs[w%3]
			var res *testkit.Response
			if w%2 == 0 {
				res = r.Do("POST", "/api/v1/suppressions/import", owner, map[string]any{"rows": rows(1000+w*each, each)})
			} else {
				doc := map[string]any{"format": "voiceapi.workspace", "version": 1, "suppressions": rows(1000+w*each, each)}
				res = r.Do("POST", "/api/v1/workspaces/"+ws+"/import", owner, doc)
			}
			switch res.Status {
			case 200, 201:
				mu.Lock()
				succeeded++
				mu.Unlock()
			case 422:
			default:
				t.Errorf("writer %d: status %d: %s", w, res.Status, res.Body)
			}
		})
	}
	wg.Wait()
	exp := rs[1].Do("GET", "/api/v1/workspaces/"+ws+"/export", owner, nil)
	testkit.Expect(t, exp, 200)
	var doc struct {
		Suppressions []json.RawMessage `json:"suppressions"`
	}
	if err := json.Unmarshal(exp.Body, &doc); err != nil {
		t.Fatal(err)
	}
	n := len(doc.Suppressions)
	if n > bound || n != listed+succeeded*each || succeeded != (bound-listed)/each {
		t.Fatalf("the list holds %d numbers after %d of %d writes of %d succeeded (%d listed before, bound %d)",
			n, succeeded, writers, each, listed, bound)
	}
}
