package postgres

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// ranked is one call of a relevance window.
type ranked struct {
	score int64
	id    string
}

// before reports whether a ranks before b: a higher score, then a newer id.
func (a ranked) before(b ranked) bool {
	return a.score > b.score || a.score == b.score && a.id > b.id
}

// A relevance cursor's id is "<anchor>\x00<calls>\x00<df,df…>\x00<score>\x00<call id>",
// as in the bbolt engine: the window's newest match, the statistics the first page scored
// with (frozen, so that calls added later change no score), and the key of the page's
// edge call.
func (sq *searchQuery) relevanceKey(anchor string, r ranked) string {
	dfs := make([]string, len(sq.df))
	for i, n := range sq.df {
		dfs[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join([]string{anchor, strconv.FormatInt(sq.calls, 10), strings.Join(dfs, ","),
		strconv.FormatInt(r.score, 10), r.id}, "\x00")
}

// parseRelevanceKey reads a relevance cursor's id and puts its statistics in sq.
func (sq *searchQuery) parseRelevanceKey(s string) (string, ranked, bool) {
	parts := strings.Split(s, "\x00")
	if len(parts) != 5 || parts[0] == "" {
		return "", ranked{}, false
	}
	calls, err1 := strconv.ParseInt(parts[1], 10, 64)
	score, err2 := strconv.ParseInt(parts[3], 10, 64)
	dfs := strings.Split(parts[2], ",")
	if err1 != nil || err2 != nil || len(dfs) != len(sq.df) {
		return "", ranked{}, false
	}
	for i, d := range dfs {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil {
			return "", ranked{}, false
		}
		sq.df[i] = n
	}
	sq.calls = calls
	return parts[0], ranked{score, parts[4]}, true
}

// window returns the newest data.RelevanceWindow matches at or before anchor ("" = the
// newest), among the first maxCallScan rows the walk examines, newest first, scored.
// The terms' frequencies come with each match (one lookup per term), and a walk of a
// term's postings that no filter checks reads no call.
func (sq *searchQuery) window(t *tx, anchor string) ([]ranked, error) {
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
	var out []ranked
	for rows.Next() {
		var id string
		var match bool
		var n int64
		var tf []int
		if err := rows.Scan(&id, &match, &n, &tf); err != nil {
			return nil, err
		}
		if match && len(out) < data.RelevanceWindow {
			out = append(out, ranked{sq.score(tf), id})
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
	dir, anchor, key := byte(older), "", ranked{}
	if req.Cursor != "" {
		d, raw, ok := t.db.decodeCursor(req.Cursor, sq.binding)
		var okKey bool
		anchor, key, okKey = sq.parseRelevanceKey(raw)
		if !ok || !okKey {
			return nil, nil, meta, data.FieldError("cursor", "The cursor is malformed, was tampered with, or belongs to another list.")
		}
		dir = d
	}
	if sq.empty {
		return nil, nil, meta, nil
	}
	window, err := sq.window(t, anchor)
	if err != nil || len(window) == 0 {
		return nil, nil, meta, err
	}
	if anchor == "" {
		anchor = window[0].id
	}
	slices.SortFunc(window, func(a, b ranked) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
	// [lo, hi) is the page's slice of the window.
	lo, hi := 0, min(perPage, len(window))
	if req.Cursor != "" {
		at, found := slices.BinarySearchFunc(window, key, func(e, k ranked) int {
			switch {
			case e == k:
				return 0
			case e.before(k):
				return -1
			}
			return 1
		})
		if dir == older {
			if found {
				at++
			}
			lo, hi = at, min(at+perPage, len(window))
		} else {
			lo, hi = max(0, at-perPage), at
		}
	}
	if hi > lo && hi < len(window) {
		meta.NextCursor = t.db.encodeCursor(older, sq.binding, sq.relevanceKey(anchor, window[hi-1]))
	}
	if hi > lo && lo > 0 {
		meta.PrevCursor = t.db.encodeCursor(newer, sq.binding, sq.relevanceKey(anchor, window[lo]))
	}
	scores := make(map[string]int64, hi-lo)
	for _, r := range window[lo:hi] {
		scores[r.id] = r.score
	}
	calls, err := t.callsByID(window[lo:hi])
	return calls, scores, meta, err
}

// callsByID reads the calls of r, in r's order.
func (t *tx) callsByID(r []ranked) ([]*data.Call, error) {
	if len(r) == 0 {
		return nil, nil
	}
	ids := make([]string, len(r))
	for i, x := range r {
		ids[i] = x.id
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
