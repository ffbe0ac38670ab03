package postgres

import (
	"fmt"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/fulltext"
)

// window returns the newest data.RelevanceWindow matches at or before anchor ("" = the
// newest), among the first maxCallScan rows the walk examines, newest first, scored.
// The terms' frequencies come with each match (one lookup per term), and a walk of a
// term's postings that no filter checks reads no call.
func (sq *searchQuery) window(t *tx, anchor string) ([]fulltext.Ranked, error) {
	limit := data.RelevanceWindow + 1 // the matches, and the row at the scan bound
	if len(sq.residual) == 0 {
		limit = min(data.RelevanceWindow, maxCallScan)
	}
	if sq.src == postingsSource && !sq.filtered {
		defer func(src *walkSource) { sq.src = src }(sq.src)
		sq.src = bareSource
	}
	walk, args := sq.walkSQL(true, anchor, anchor != "", limit, "id")
	tfs := make([]string, len(sq.terms))
	for i, term := range sq.terms {
		args = append(args, term)
		tfs[i] = fmt.Sprintf("coalesce((SELECT tf FROM call_terms t WHERE t.workspace_id = $1 AND t.term = $%d AND t.call_id = x.id), 0)", len(args))
	}
	rows, err := t.query("SELECT x.*, ARRAY["+strings.Join(tfs, ", ")+"]::int[] FROM ("+walk+") x", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []fulltext.Ranked
	for rows.Next() {
		var id string
		var match bool
		var n int64
		var tf []int
		if err := rows.Scan(&id, &match, &n, &tf); err != nil {
			return nil, err
		}
		if match && len(out) < data.RelevanceWindow {
			out = append(out, fulltext.Ranked{Score: sq.score(tf), ID: id})
		}
	}
	return out, rows.Err()
}

// relevancePage ranks the window (the newest data.RelevanceWindow matches at or before
// the anchor) and slices one page out of it before or after the cursor's key.
func (sq *searchQuery) relevancePage(t *tx, req data.PageRequest) ([]*data.Call, map[string]int64, data.Page, error) {
	perPage := req.PerPage
	if perPage == 0 {
		perPage = DefaultPerPage
	}
	meta := data.Page{PerPage: perPage}
	dir, anchor, key := byte(older), "", (*fulltext.Ranked)(nil)
	if req.Cursor != "" {
		d, raw, ok := t.db.decodeCursor(req.Cursor, sq.binding)
		a, stats, r, okKey := fulltext.ParseCursorKey(raw, len(sq.terms))
		if !ok || !okKey {
			return nil, nil, meta, errBadCursor()
		}
		dir, anchor, key = d, a, &r
		sq.calls, sq.df = stats.Calls, stats.DF // the first page's, frozen
	}
	if sq.empty {
		return nil, nil, meta, nil
	}
	window, err := sq.window(t, anchor)
	if err != nil || len(window) == 0 {
		return nil, nil, meta, err
	}
	if anchor == "" {
		anchor = window[0].ID
	}
	lo, hi := fulltext.PageBounds(window, perPage, key, dir == older)
	stats := fulltext.Stats{Calls: sq.calls, DF: sq.df}
	if hi > lo && hi < len(window) {
		meta.NextCursor = t.db.encodeCursor(older, sq.binding, stats.CursorKey(anchor, window[hi-1]))
	}
	if hi > lo && lo > 0 {
		meta.PrevCursor = t.db.encodeCursor(newer, sq.binding, stats.CursorKey(anchor, window[lo]))
	}
	scores := make(map[string]int64, hi-lo)
	for _, r := range window[lo:hi] {
		scores[r.ID] = r.Score
	}
	calls, err := t.callsByID(window[lo:hi])
	return calls, scores, meta, err
}

// callsByID reads the calls of r, in r's order.
func (t *tx) callsByID(r []fulltext.Ranked) ([]*data.Call, error) {
	if len(r) == 0 {
		return nil, nil
	}
	ids := make([]string, len(r))
	for i, x := range r {
		ids[i] = x.ID
	}
	rows, err := t.query(`SELECT `+callCols+` FROM calls WHERE id = ANY($1::text[])`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[string]*data.Call, len(ids))
	for rows.Next() {
		c, err := scanCall(rows)
		if err != nil {
			return nil, err
		}
		byID[c.ID] = c
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*data.Call, 0, len(ids))
	for _, id := range ids {
		if c := byID[id]; c != nil {
			out = append(out, c) // a call deleted since the window was read is skipped
		}
	}
	return out, nil
}
