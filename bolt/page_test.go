package bolt_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
)

// walk follows next_cursor to the end and returns the ids in order.
func walk(t testing.TB, ctx context.Context, list func(data.PageRequest) ([]*data.Workspace, data.Page, error), perPage int) []string {
	var out []string
	req := data.PageRequest{PerPage: perPage}
	for {
		page, meta, err := list(req)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range page {
			out = append(out, w.ID)
		}
		if meta.NextCursor == nil {
			return out
		}
		req.Cursor = *meta.NextCursor
	}
}

func TestPageWalksEveryRecordOnce(t *testing.T) {
	db := openTestDB(t)
	u := mustUser(t, db, "p@example.com")
	if err := db.BulkWorkspaces(u.ID, 250); err != nil {
		t.Fatal(err)
	}
	ctx := asUser(t, db, u)
	list := func(r data.PageRequest) ([]*data.Workspace, data.Page, error) {
		return cli.NewServices(db).Workspaces.ListWorkspaces(ctx, r)
	}
	for _, per := range []int{1, 7, 15, 100, 251} {
		ids := walk(t, ctx, list, per)
		if len(ids) != 251 {
			t.Fatalf("per_page %d: %d ids", per, len(ids))
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] >= ids[i-1] {
				t.Fatalf("per_page %d: not newest first at %d", per, i)
			}
		}
	}
	// Backwards from the last page with prev_cursor returns every page again.
	req := data.PageRequest{PerPage: 40}
	var pages [][]string
	for {
		page, meta, err := cli.NewServices(db).Workspaces.ListWorkspaces(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, w := range page {
			ids = append(ids, w.ID)
		}
		pages = append(pages, ids)
		if meta.NextCursor == nil {
			if len(pages) > 1 && meta.PrevCursor == nil {
				t.Fatal("last page without prev_cursor")
			}
			req.Cursor = *meta.PrevCursor
			break
		}
		req.Cursor = *meta.NextCursor
	}
	for i := len(pages) - 2; i >= 0; i-- {
		page, meta, err := cli.NewServices(db).Workspaces.ListWorkspaces(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != len(pages[i]) || page[0].ID != pages[i][0] || page[len(page)-1].ID != pages[i][len(pages[i])-1] {
			t.Fatalf("prev page %d differs", i)
		}
		if (meta.PrevCursor == nil) != (i == 0) {
			t.Fatalf("page %d prev_cursor %v", i, meta.PrevCursor)
		}
		if meta.PrevCursor != nil {
			req.Cursor = *meta.PrevCursor
		}
	}
}

// BenchmarkPage reads one page of 100 from the middle of a user's workspaces: the cost
// must not grow with the collection (conventions §4). VOICEAPI_BENCH_PAGE_RECORDS lists
// the collection sizes (default "1000,100000"; docs/performance.md uses 1000,1000000).
func BenchmarkPage(b *testing.B) {
	sizes := []int{1000, 100000}
	if s := os.Getenv("VOICEAPI_BENCH_PAGE_RECORDS"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1000 {
				b.Fatalf("VOICEAPI_BENCH_PAGE_RECORDS: %q is not a size of at least 1000", f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprint("records=", n), func(b *testing.B) {
			db := openTestDB(b)
			u := mustUser(b, db, "bench@example.com")
			if err := db.BulkWorkspaces(u.ID, n); err != nil {
				b.Fatal(err)
			}
			ctx := asUser(b, db, u)
			// A cursor halfway down the list.
			req := data.PageRequest{PerPage: 100}
			for i := 0; i < n/200; i++ {
				_, meta, err := cli.NewServices(db).Workspaces.ListWorkspaces(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				req.Cursor = *meta.NextCursor
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				page, _, err := cli.NewServices(db).Workspaces.ListWorkspaces(ctx, req)
				if err != nil || len(page) != 100 {
					b.Fatal(len(page), err)
				}
			}
		})
	}
}

// A page left empty because the records after the cursor were deleted still leads back:
// its prev_cursor gives the oldest remaining page.
func TestEmptyPageAfterDeletesHasAWayBack(t *testing.T) {
	db := openTestDB(t)
	// Keys of users on both sides of u's scope in the index.
	before := mustUser(t, db, "before@example.com")
	u := mustUser(t, db, "e@example.com")
	ctx := asUser(t, db, u)
	for _, o := range []*data.User{before, mustUser(t, db, "after@example.com")} {
		if _, _, err := cli.NewServices(db).Auth.CreateAPIKey(asUser(t, db, o), data.APIKeyCreate{Name: "other"}); err != nil {
			t.Fatal(err)
		}
	}
	var keys []int64
	for i := 0; i < 3; i++ {
		k, _, err := cli.NewServices(db).Auth.CreateAPIKey(ctx, data.APIKeyCreate{Name: fmt.Sprint("k", i)})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.ID)
	}
	first, meta, err := cli.NewServices(db).Auth.ListAPIKeys(ctx, data.PageRequest{PerPage: 2})
	if err != nil || meta.NextCursor == nil || len(first) != 2 {
		t.Fatal(first, meta, err)
	}
	next := *meta.NextCursor
	if err := cli.NewServices(db).Auth.DeleteAPIKey(ctx, keys[0]); err != nil {
		t.Fatal(err)
	}
	empty, meta, err := cli.NewServices(db).Auth.ListAPIKeys(ctx, data.PageRequest{PerPage: 2, Cursor: next})
	if err != nil || len(empty) != 0 {
		t.Fatal(empty, err)
	}
	if meta.NextCursor != nil || meta.PrevCursor == nil {
		t.Fatalf("empty page meta: next %v prev %v", meta.NextCursor, meta.PrevCursor)
	}
	back, meta, err := cli.NewServices(db).Auth.ListAPIKeys(ctx, data.PageRequest{PerPage: 2, Cursor: *meta.PrevCursor})
	if err != nil || len(back) != 2 || back[0].ID != first[0].ID || back[1].ID != first[1].ID {
		t.Fatalf("back: %v %v", back, err)
	}
	if meta.PrevCursor != nil || meta.NextCursor != nil {
		t.Errorf("back on the only page: %+v", meta)
	}
	// With nothing left at all, an empty page has no cursors.
	for _, id := range keys[1:] {
		if err := cli.NewServices(db).Auth.DeleteAPIKey(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	empty, meta, err = cli.NewServices(db).Auth.ListAPIKeys(ctx, data.PageRequest{PerPage: 2, Cursor: next})
	if err != nil || len(empty) != 0 || meta.NextCursor != nil || meta.PrevCursor != nil {
		t.Errorf("empty list: %v %+v %v", empty, meta, err)
	}
}
