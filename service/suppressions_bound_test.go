package service_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// numbersFrom returns n suppression rows of distinct numbers from +1415555<first>.
func numbersFrom(first, n int) []data.SuppressionCreate {
	rows := make([]data.SuppressionCreate, n)
	for i := range rows {
		rows[i].PhoneNumber = fmt.Sprintf("+1415555%04d", first+i)
	}
	return rows
}

// listLen is how many numbers ctx's workspace lists.
func listLen(t *testing.T, env *testkit.Env, ctx context.Context) int {
	t.Helper()
	n := 0
	req := data.PageRequest{PerPage: 100}
	for {
		list, page, err := env.Svc.Suppressions.Suppressions(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		n += len(list)
		if page.NextCursor == nil {
			return n
		}
		req.Cursor = *page.NextCursor
	}
}

// refusedAs fails the test unless err is a 422 naming field.
func refusedAs(t *testing.T, err error, field string) {
	t.Helper()
	if e, ok := err.(*data.Error); !ok || e.Code != data.EINVALID || e.Fields[field] == nil {
		t.Fatalf("want a 422 naming %s, got %v", field, err)
	}
}

// A list made before the bound, longer than it, keeps its numbers: a number it holds
// may be added again (a duplicate changes nothing), a new one is refused until deletes
// take the list below the bound.
func TestSuppressionListOverTheBoundKeepsItsNumbers(t *testing.T) {
	env := testkit.New(t, nil)
	u := env.User(t, "a@example.com")
	ctx := testkit.As(u)
	if _, err := env.Svc.Suppressions.ImportSuppressions(ctx, numbersFrom(0, 6)); err != nil {
		t.Fatal(err)
	}
	env.Svc.LowerSuppressionBound(4) // the list of 6 now stands where a list made before the bound would

	_, added, err := env.Svc.Suppressions.AddSuppression(ctx, data.SuppressionCreate{PhoneNumber: "+14155550003"})
	if err != nil || added {
		t.Fatalf("a number listed already: added %v, %v", added, err)
	}
	if res, err := env.Svc.Suppressions.ImportSuppressions(ctx, numbersFrom(0, 6)); err != nil || res.Added != 0 {
		t.Fatalf("an import of listed numbers: %+v, %v", res, err)
	}
	_, _, err = env.Svc.Suppressions.AddSuppression(ctx, data.SuppressionCreate{PhoneNumber: "+14155550100"})
	refusedAs(t, err, "phone_number")

	list, _, err := env.Svc.Suppressions.Suppressions(ctx, data.PageRequest{PerPage: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list { // 6 - 3 = 3: room for one
		if err := env.Svc.Suppressions.DeleteSuppression(ctx, e.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, added, err := env.Svc.Suppressions.AddSuppression(ctx, data.SuppressionCreate{PhoneNumber: "+14155550100"}); err != nil || !added {
		t.Fatalf("below the bound: added %v, %v", added, err)
	}
	_, _, err = env.Svc.Suppressions.AddSuppression(ctx, data.SuppressionCreate{PhoneNumber: "+14155550101"})
	refusedAs(t, err, "phone_number")
	if n := listLen(t, env, ctx); n != 4 {
		t.Fatalf("the list holds %d numbers, want 4", n)
	}
}

// Imports and adds run together near the bound: the list never passes it, every
// addition is whole or refused whole, and the numbers listed are exactly those of the
// additions that succeeded. On PostgreSQL the writers are separate transactions, each
// reading the list's count inside its own.
func TestSuppressionBoundHoldsUnderConcurrentWrites(t *testing.T) {
	env := testkit.New(t, nil)
	u := env.User(t, "a@example.com")
	ctx := testkit.As(u)
	const bound, listed, writers, each = 40, 30, 8, 4
	env.Svc.LowerSuppressionBound(bound)
	if _, err := env.Svc.Suppressions.ImportSuppressions(ctx, numbersFrom(0, listed)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for w := range writers {
		wg.Go(func() {
			var err error
			if w%4 == 3 { // every fourth writer adds its numbers one by one
				for _, row := range numbersFrom(1000+w*each, each) {
					if _, _, err = env.Svc.Suppressions.AddSuppression(ctx, row); err == nil {
						mu.Lock()
						ok++
						mu.Unlock()
					}
				}
				return
			}
			if _, err = env.Svc.Suppressions.ImportSuppressions(ctx, numbersFrom(1000+w*each, each)); err == nil {
				mu.Lock()
				ok += each
				mu.Unlock()
				return
			}
			if e, isData := err.(*data.Error); !isData || e.Code != data.EINVALID {
				t.Errorf("writer %d: %v", w, err)
			}
		})
	}
	wg.Wait()
	if n := listLen(t, env, ctx); n != listed+ok || n > bound {
		t.Fatalf("the list holds %d numbers; %d were listed and %d added, the bound is %d", n, listed, ok, bound)
	}
	if ok != bound-listed {
		t.Errorf("%d numbers added, want the %d the bound left room for", ok, bound-listed)
	}
}
