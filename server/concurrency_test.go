package server_test

import (
	"sync"
	"testing"
)

// Check-and-insert runs in one write transaction: concurrent duplicates cannot both pass.
func TestConcurrentDuplicates(t *testing.T) {
	e := newEnv(t)
	joiner := e.newUser("zed@example.com", false)
	const n = 30
	count := func(reqs func(i int) *response) map[int]int {
		var mu sync.Mutex
		got := map[int]int{}
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := reqs(i)
				mu.Lock()
				got[r.Status]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		return got
	}
	got := count(func(int) *response {
		return e.do("POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users", e.Owner.Token, map[string]any{"id": joiner.ID, "role": "member"})
	})
	if got[201] != 1 || got[409] != n-1 {
		t.Errorf("concurrent adds of one member: %v", got)
	}
	got = count(func(int) *response {
		return e.do("POST", "/api/v1/users", e.Owner.Token, map[string]any{"name": "Twin", "email": "twin@example.com", "password": "password-twin"})
	})
	if got[201] != 1 || got[409] != n-1 {
		t.Errorf("concurrent creates of one email: %v", got)
	}
	// Distinct creates all succeed and all are listed.
	got = count(func(int) *response {
		return e.do("POST", "/api/v1/workspaces", e.Owner.Token, map[string]any{"name": "parallel"})
	})
	if got[201] != n {
		t.Errorf("concurrent distinct creates: %v", got)
	}
	if l := e.do("GET", "/api/v1/workspaces?per_page=100", e.Owner.Token, nil); len(l.List()) != n+1 {
		t.Errorf("%d workspaces listed, want %d", len(l.List()), n+1)
	}
}
