package client

import (
	"context"
	"iter"

	"github.com/voiceapi/voiceapi/data"
)

// pageFunc fetches one page of a list.
type pageFunc[T any] func(ctx context.Context, p data.PageRequest) ([]*T, data.Page, error)

// all iterates over every item of a list, page by page, following next_cursor. An error
// is yielded once, with a nil item, and ends the iteration; breaking out of the loop
// stops fetching.
func all[T any](ctx context.Context, c *Client, fetch pageFunc[T]) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		req := data.PageRequest{PerPage: c.pageSize}
		for {
			items, page, err := fetch(ctx, req)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if page.NextCursor == nil || *page.NextCursor == "" || len(items) == 0 {
				return
			}
			req.Cursor = *page.NextCursor
		}
	}
}

// Collect gathers an iterator's items into a slice, stopping at the first error.
func Collect[T any](seq iter.Seq2[*T, error]) ([]*T, error) {
	var out []*T
	for it, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, it)
	}
	return out, nil
}
