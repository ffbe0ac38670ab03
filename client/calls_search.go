package client

import (
	"context"
	"io"
	"net/url"
	"strconv"

	"github.com/voiceapi/voiceapi/data"
)

// Search returns one page of the calls holding every word of q (and matching f), each
// with why it matched; sort is "created_at" (newest first, when empty) or "relevance".
func (s *CallsService) Search(ctx context.Context, f data.CallFilter, q, sort string, p data.PageRequest, opts ...RequestOption) ([]*data.CallHit, data.Page, error) {
	query := callQuery(f)
	query.Set("q", q)
	if sort != "" {
		query.Set("sort", sort)
	}
	res, err := s.c.do(ctx, request{op: "callList", query: pageQuery(query, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.CallHit](res)
}

// CallExport says what an export streams: the calls f (and Q, when not empty) select,
// as Format ("ndjson" when empty, or "csv"), at most Limit (0: all), after Cursor.
type CallExport struct {
	Filter data.CallFilter
	Q      string
	Format string
	Limit  int
	Cursor string
}

// ExportResult is what an export's trailers said: how many calls it sent, and the
// cursor that resumes it ("" when it is complete).
type ExportResult struct {
	Count  int
	Cursor string
}

// Export streams the calls x selects into w as they arrive. A cut stream is an error:
// resume from the Cursor of the last export that ended cleanly (ask for chunks with
// Limit to bound what a cut costs).
func (s *CallsService) Export(ctx context.Context, x CallExport, w io.Writer, opts ...RequestOption) (ExportResult, error) {
	query := callQuery(x.Filter)
	set := func(k, v string) {
		if v != "" {
			query.Set(k, v)
		}
	}
	set("q", x.Q)
	set("format", x.Format)
	set("cursor", x.Cursor)
	if x.Limit > 0 {
		query.Set("limit", strconv.Itoa(x.Limit))
	}
	res, err := s.c.do(ctx, request{op: "callExport", query: url.Values(query), sink: w, opts: opts})
	if err != nil {
		return ExportResult{}, err
	}
	n, _ := strconv.Atoi(res.trailer.Get("Export-Count"))
	return ExportResult{Count: n, Cursor: res.trailer.Get("Export-Cursor")}, nil
}
