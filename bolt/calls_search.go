package bolt

import (
	"cmp"
	"fmt"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/fulltext"
)

// The search index of calls. A term's postings in a workspace are the scope
// "<ws>/t/<term>" of bucketCallPostingDocs, packed in blocks (calls_postings.go) and
// walked newest first like any call index scope, each call with the term's frequency in
// it. The number of calls holding a term is the scope's count in bucketCallScopeCounts.
// The service hands the terms a call was indexed with along with its new ones, so a
// replacement or a deletion touches exactly the postings the call has; storage keeps no
// list of its own (bucketCallTerms, 310 bytes a seeded call, held one until schema 4).
// Older layouts are moved at open (migrate_docs.go).
var (
	bucketCallPostings      = []byte("call_postings")       // schema 2: one key a posting
	bucketCallPostingBlocks = []byte("call_posting_blocks") // schema 3: blocks of call ids
	bucketCallTerms         = []byte("call_terms")          // schema 3: each call's terms
)

func termScope(ws, term string) string { return ws + "/t/" + term }

// SetCallTerms implements service.CallSearchTx.
func (t tx) SetCallTerms(ws, id string, old, next map[string]int) error {
	return setCallTerms(t.b, ws, id, old, next)
}

// setCallTerms removes the postings of the terms of old that next lacks and sets those of
// next. A posting old names but the index lacks is no error (a call stored before the
// index was built has none).
func setCallTerms(tx *bbolt.Tx, ws, id string, old, next map[string]int) error {
	for term, tf := range next {
		if tf < 1 || tf > 255 || term == "" || strings.IndexByte(term, 0) >= 0 {
			return fmt.Errorf("call %s: bad index term %q (frequency %d)", id, term, tf)
		}
	}
	if len(old) == 0 && len(next) == 0 {
		return nil
	}
	ix := callIndexOf(tx)
	pc, ok := postedCallOf(ix, ws, id)
	if !ok {
		return fmt.Errorf("call %s is not a stored call of workspace %s with a well-formed id: it cannot be indexed", id, ws)
	}
	post := tx.Bucket(bucketCallPostingDocs)
	set := func(term string, tf int) error {
		delta, err := putPosting(post, ix, termScope(ws, term), pc, byte(tf))
		if err != nil || delta == 0 {
			return err
		}
		return addScopeCount(tx, termScope(ws, term), int64(delta))
	}
	for term := range old {
		if _, keep := next[term]; !keep {
			if err := set(term, 0); err != nil {
				return err
			}
		}
	}
	for term, tf := range next {
		if err := set(term, tf); err != nil {
			return err
		}
	}
	return nil
}

// searchQuery is a callQuery that also requires every term.
type searchQuery struct {
	*callQuery
	ws     string
	terms  []string
	df     []int64 // calls holding each term
	calls  int64   // calls of the workspace
	tfs    []int   // score's buffer
	post   *bbolt.Bucket
	ix     callIndex
	search data.CallSearch
	// lastID's docID, kept for the term checks and the score of the same call.
	lastID  string
	lastDoc docID
	lastOK  bool
}

// doc returns id's docID (false: the call is not in the workspace's index).
func (sq *searchQuery) doc(id string) (docID, bool) {
	if id != sq.lastID {
		sq.lastID = id
		sq.lastDoc, sq.lastOK = docOf(sq.ix, sq.ws, id)
	}
	return sq.lastDoc, sq.lastOK
}

// newSearchQuery drives the walk by the smallest of the filter's scope and the rarest
// term's postings; the other terms are checked by one lookup each per entry.
func newSearchQuery(tx *bbolt.Tx, ws string, agentIDs []string, f data.CallFilter, s data.CallSearch) *searchQuery {
	q := newCallQuery(tx, ws, agentIDs, f)
	counts := tx.Bucket(bucketCallScopeCounts)
	sq := &searchQuery{callQuery: q, ws: ws, terms: s.Terms, calls: int64(scopeCountOf(counts, ws)),
		post: tx.Bucket(bucketCallPostingDocs), ix: callIndexOf(tx), search: s}
	q.binding += "\x00search\x00" + s.Sort + "\x00" + strings.Join(s.Terms, "\x00")
	if len(s.Terms) == 0 {
		q.scopes = nil
		return sq
	}
	rarest := 0
	for i, term := range s.Terms {
		sq.df = append(sq.df, int64(scopeCountOf(counts, termScope(ws, term))))
		if sq.df[i] < sq.df[rarest] {
			rarest = i
		}
	}
	var filterN int64
	for _, sc := range q.scopes {
		filterN += int64(scopeCountOf(counts, sc))
	}
	if sq.df[rarest] == 0 {
		q.scopes = nil // a term no call holds: nothing matches
	} else if len(q.scopes) == 1 && q.scopes[0] == ws || sq.df[rarest] < filterN {
		// A term's postings hold every agent's calls; their cursor reads each call's
		// attributes from its index entry.
		q.scopes, q.blocks = []string{termScope(ws, s.Terms[rarest])}, true
		q.implied = false
	}
	q.extra = func(id string) bool {
		d, ok := sq.doc(id)
		if !ok {
			return false
		}
		for _, term := range s.Terms {
			if postingTF(sq.post, termScope(ws, term), d) == 0 {
				return false
			}
		}
		return true
	}
	return sq
}

// score is the call's relevance (fulltext.Stats.Score), its term frequencies read from
// the postings.
func (sq *searchQuery) score(id string) int64 {
	sq.tfs = sq.tfs[:0]
	d, ok := sq.doc(id)
	for _, term := range sq.terms {
		tf := 0
		if ok {
			tf = int(postingTF(sq.post, termScope(sq.ws, term), d))
		}
		sq.tfs = append(sq.tfs, tf)
	}
	return fulltext.Stats{Calls: sq.calls, DF: sq.df}.Score(sq.tfs)
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

// relevancePage ranks the window (the newest data.RelevanceWindow matches at or before
// the anchor) and slices one page out of it before or after the cursor's key.
func (sq *searchQuery) relevancePage(db *DB, tx *bbolt.Tx, req data.PageRequest) ([]string, data.Page, error) {
	perPage := cmp.Or(req.PerPage, DefaultPerPage)
	meta := data.Page{PerPage: perPage}
	dir, anchor, key := byte(older), "", (*fulltext.Ranked)(nil)
	if req.Cursor != "" {
		d, raw, ok := db.decodeCursor(req.Cursor, sq.binding)
		a, stats, r, okKey := fulltext.ParseCursorKey(raw, len(sq.terms))
		if !ok || !okKey {
			return nil, meta, errBadCursor()
		}
		dir, anchor, key = d, a, &r
		sq.calls, sq.df = stats.Calls, stats.DF // the first page's, frozen
	}
	from := ""
	if anchor != "" {
		from = anchor + "\x00" // at or before the anchor: the walk is exclusive
	}
	var window []fulltext.Ranked
	sq.walk(tx, true, from, maxCallScan, func(id string, a callAttrs) bool {
		if sq.ok(id, a) {
			window = append(window, fulltext.Ranked{Score: sq.score(id), ID: id})
		}
		return len(window) < data.RelevanceWindow
	})
	if len(window) == 0 {
		return nil, meta, nil
	}
	if anchor == "" {
		anchor = window[0].ID
	}
	lo, hi := fulltext.PageBounds(window, perPage, key, dir == older)
	var ids []string
	for _, r := range window[lo:hi] {
		ids = append(ids, r.ID)
	}
	stats := fulltext.Stats{Calls: sq.calls, DF: sq.df}
	if hi < len(window) && hi > lo {
		meta.NextCursor = db.encodeCursor(older, sq.binding, stats.CursorKey(anchor, window[hi-1]))
	}
	if lo > 0 && hi > lo {
		meta.PrevCursor = db.encodeCursor(newer, sq.binding, stats.CursorKey(anchor, window[lo]))
	}
	return ids, meta, nil
}
