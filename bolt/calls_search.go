package bolt

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

// The search index of calls. A term's postings in a workspace are the scope
// "<ws>/t/<term>" of bucketCallPostingBlocks, packed in blocks (calls_postings.go) and
// walked newest first like any call index scope, each call with the term's frequency in
// it. The number of calls holding a term is the scope's count in bucketCallScopeCounts.
// bucketCallTerms keeps each call's terms, so a replacement or a deletion touches exactly
// the postings the call has. bucketCallPostings held one key a posting before schema 3;
// opening such a file moves them into blocks (migratePostings).
var (
	bucketCallPostings = []byte("call_postings")
	bucketCallTerms    = []byte("call_terms")
)

func termScope(ws, term string) string { return ws + "/t/" + term }

func encodeTerms(terms map[string]int) []byte {
	keys := make([]string, 0, len(terms))
	for t := range terms {
		keys = append(keys, t)
	}
	slices.Sort(keys)
	var b []byte
	for _, t := range keys {
		b = append(b, t...)
		b = append(b, 0, byte(terms[t]))
	}
	return b
}

func decodeTerms(v []byte) map[string]int {
	out := map[string]int{}
	for len(v) > 0 {
		i := bytes.IndexByte(v, 0)
		if i < 0 || i+1 >= len(v) {
			break
		}
		out[string(v[:i])] = int(v[i+1])
		v = v[i+2:]
	}
	return out
}

// SetCallTerms implements service.CallSearchTx.
func (t tx) SetCallTerms(ws, id string, terms map[string]int) error {
	return setCallTerms(t.b, ws, id, terms)
}

func setCallTerms(tx *bbolt.Tx, ws, id string, terms map[string]int) error {
	for term, tf := range terms {
		if tf < 1 || tf > 255 || term == "" || strings.IndexByte(term, 0) >= 0 {
			return fmt.Errorf("call %s: bad index term %q (frequency %d)", id, term, tf)
		}
	}
	fwd := tx.Bucket(bucketCallTerms)
	fwd.FillPercent = appendFill
	old, err := storedTerms(fwd.Get([]byte(id)))
	if err != nil {
		return fmt.Errorf("call %s: %w", id, err)
	}
	post := tx.Bucket(bucketCallPostingBlocks)
	for term := range old {
		if _, keep := terms[term]; keep {
			continue
		}
		if err := putPosting(post, termScope(ws, term), id, 0); err != nil {
			return err
		}
		if err := addScopeCount(tx, termScope(ws, term), -1); err != nil {
			return err
		}
	}
	for term, tf := range terms {
		was, had := old[term]
		if had && was == tf {
			continue
		}
		if err := putPosting(post, termScope(ws, term), id, byte(tf)); err != nil {
			return err
		}
		if !had {
			if err := addScopeCount(tx, termScope(ws, term), 1); err != nil {
				return err
			}
		}
	}
	if len(terms) == 0 {
		return fwd.Delete([]byte(id))
	}
	return fwd.Put([]byte(id), packTerms(encodeTerms(terms)))
}

// searchQuery is a callQuery that also requires every term.
type searchQuery struct {
	*callQuery
	ws     string
	terms  []string
	df     []uint64 // calls holding each term
	calls  uint64   // calls of the workspace
	post   *bbolt.Bucket
	search data.CallSearch
}

// newSearchQuery drives the walk by the smallest of the filter's scope and the rarest
// term's postings; the other terms are checked by one lookup each per entry.
func newSearchQuery(tx *bbolt.Tx, ws string, agentIDs []string, f data.CallFilter, s data.CallSearch) *searchQuery {
	q := newCallQuery(tx, ws, agentIDs, f)
	counts := tx.Bucket(bucketCallScopeCounts)
	sq := &searchQuery{callQuery: q, ws: ws, terms: s.Terms, calls: scopeCountOf(counts, ws),
		post: tx.Bucket(bucketCallPostingBlocks), search: s}
	q.binding += "\x00search\x00" + s.Sort + "\x00" + strings.Join(s.Terms, "\x00")
	if len(s.Terms) == 0 {
		q.scopes = nil
		return sq
	}
	rarest := 0
	for i, term := range s.Terms {
		sq.df = append(sq.df, scopeCountOf(counts, termScope(ws, term)))
		if sq.df[i] < sq.df[rarest] {
			rarest = i
		}
	}
	var filterN uint64
	for _, sc := range q.scopes {
		filterN += scopeCountOf(counts, sc)
	}
	if sq.df[rarest] == 0 {
		q.scopes = nil // a term no call holds: nothing matches
	} else if len(q.scopes) == 1 && q.scopes[0] == ws || sq.df[rarest] < filterN {
		q.scopes, q.bucket, q.blocks = []string{termScope(ws, s.Terms[rarest])}, bucketCallPostingBlocks, true
		q.implied = false // a term's postings hold every agent's calls
		idx := tx.Bucket(bucketCallsIndex)
		q.attrs = func(id string, _ []byte) callAttrs { return decodeAttrs(idx.Get(indexKey(ws, id))) }
	}
	q.extra = func(id string) bool {
		for _, term := range s.Terms {
			if postingTF(sq.post, termScope(ws, term), id) == 0 {
				return false
			}
		}
		return true
	}
	return sq
}

// score is a BM25 sum over the terms without length normalization, in thousandths.
func (sq *searchQuery) score(id string) int64 {
	const k1 = 1.2
	var s float64
	n := float64(sq.calls)
	for i, term := range sq.terms {
		v := postingTF(sq.post, termScope(sq.ws, term), id)
		if v == 0 {
			continue
		}
		tf, df := float64(v), float64(sq.df[i])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		s += idf * tf * (k1 + 1) / (tf + k1)
	}
	return int64(math.Round(s * 1000))
}

// SearchCalls implements service.CallSearchTx.
func (t tx) SearchCalls(ws string, agentIDs []string, f data.CallFilter, s data.CallSearch, req data.PageRequest) ([]*data.CallHit, data.Page, error) {
	sq := newSearchQuery(t.b, ws, agentIDs, f, s)
	var ids []string
	var page data.Page
	var err error
	if s.Sort == data.SortRelevance {
		ids, page, err = sq.relevancePage(t.db, t.b, req)
	} else {
		ids, page, err = sq.page(t.db, t.b, req)
	}
	if err != nil {
		return nil, page, err
	}
	calls := t.b.Bucket(bucketCalls)
	hits := make([]*data.CallHit, 0, len(ids))
	for _, id := range ids {
		h := &data.CallHit{Search: &data.SearchHit{Score: float64(sq.score(id)) / 1000}}
		found, err := getJSON(calls, []byte(id), &h.Call)
		if err != nil {
			return nil, page, err
		}
		if !found {
			return nil, page, fmt.Errorf("call %s is indexed but not stored", id)
		}
		hits = append(hits, h)
	}
	return hits, page, nil
}

// ranked is one call of a relevance window.
type ranked struct {
	score int64
	id    string
}

// before reports whether a ranks before b: a higher score, then a newer id.
func (a ranked) before(b ranked) bool {
	return a.score > b.score || a.score == b.score && a.id > b.id
}

// A relevance cursor's id is "<anchor>\x00<calls>\x00<df,df…>\x00<score>\x00<call id>":
// the window's newest match, the statistics the first page scored with (frozen, so that
// calls added later change no score), and the key of the page's edge call.
func (sq *searchQuery) relevanceKey(anchor string, r ranked) string {
	dfs := make([]string, len(sq.df))
	for i, n := range sq.df {
		dfs[i] = strconv.FormatUint(n, 10)
	}
	return strings.Join([]string{anchor, strconv.FormatUint(sq.calls, 10), strings.Join(dfs, ","),
		strconv.FormatInt(r.score, 10), r.id}, "\x00")
}

// parseRelevanceKey reads a relevance cursor's id and puts its statistics in sq.
func (sq *searchQuery) parseRelevanceKey(s string) (string, ranked, bool) {
	parts := strings.Split(s, "\x00")
	if len(parts) != 5 {
		return "", ranked{}, false
	}
	calls, err1 := strconv.ParseUint(parts[1], 10, 64)
	score, err2 := strconv.ParseInt(parts[3], 10, 64)
	dfs := strings.Split(parts[2], ",")
	if err1 != nil || err2 != nil || len(dfs) != len(sq.df) {
		return "", ranked{}, false
	}
	for i, d := range dfs {
		n, err := strconv.ParseUint(d, 10, 64)
		if err != nil {
			return "", ranked{}, false
		}
		sq.df[i] = n
	}
	sq.calls = calls
	return parts[0], ranked{score, parts[4]}, true
}

// relevancePage ranks the window (the newest data.RelevanceWindow matches at or before
// the anchor) and slices one page out of it before or after the cursor's key.
func (sq *searchQuery) relevancePage(db *DB, tx *bbolt.Tx, req data.PageRequest) ([]string, data.Page, error) {
	perPage := cmp.Or(req.PerPage, DefaultPerPage)
	meta := data.Page{PerPage: perPage}
	dir, anchor, key := byte(older), "", ranked{}
	if req.Cursor != "" {
		d, raw, ok := db.decodeCursor(req.Cursor, sq.binding)
		var okKey bool
		anchor, key, okKey = sq.parseRelevanceKey(raw)
		if !ok || !okKey {
			return nil, meta, data.FieldError("cursor", "The cursor is malformed, was tampered with, or belongs to another list.")
		}
		dir = d
	}
	from := ""
	if anchor != "" {
		from = anchor + "\x00" // at or before the anchor: the walk is exclusive
	}
	var window []ranked
	sq.walk(tx, true, from, maxCallScan, func(id string, a callAttrs) bool {
		if sq.ok(id, a) {
			window = append(window, ranked{sq.score(id), id})
		}
		return len(window) < data.RelevanceWindow
	})
	if len(window) == 0 {
		return nil, meta, nil
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
		at, _ := slices.BinarySearchFunc(window, key, func(e, k ranked) int {
			if e.before(k) {
				return -1
			}
			if e == k {
				return 0
			}
			return 1
		})
		if dir == older {
			if at < len(window) && window[at] == key {
				at++
			}
			lo, hi = at, min(at+perPage, len(window))
		} else {
			lo, hi = max(0, at-perPage), at
		}
	}
	var ids []string
	for _, r := range window[lo:hi] {
		ids = append(ids, r.id)
	}
	if hi < len(window) && hi > lo {
		meta.NextCursor = db.encodeCursor(older, sq.binding, sq.relevanceKey(anchor, window[hi-1]))
	}
	if lo > 0 && hi > lo {
		meta.PrevCursor = db.encodeCursor(newer, sq.binding, sq.relevanceKey(anchor, window[lo]))
	}
	return ids, meta, nil
}
