package postgres

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/fulltext"
)

// The search index of calls (migrations/0006_call_search.sql): call_terms holds a row per
// term of a call, call_term_counts how many calls hold each term. A search walks the
// postings of its rarest term newest first (or the list index of a filter rarer still)
// and checks the other terms and filters on each call, through callQuery's walk, so its
// pages have the cursors and the scan bound of Calls.

func init() {
	workspaceCascades = append(workspaceCascades, func(t *tx, ws string) error {
		for _, table := range []string{"call_terms", "call_term_counts"} {
			if _, err := t.exec(`DELETE FROM `+table+` WHERE workspace_id = $1`, ws); err != nil {
				return err
			}
		}
		return nil
	})
}

// setCallTermsSQL replaces a call's postings by the given terms ($3) and frequencies
// ($4) in one statement: it removes the postings of terms no longer given, adds the new
// ones, updates the frequencies that changed, and moves the terms' call counts (added in
// term order, so that concurrent writers lock the count rows in one order).
const setCallTermsSQL = `WITH given AS (
		SELECT * FROM unnest($3::text[], $4::smallint[]) AS g(term, tf)
	), old AS (
		SELECT term, tf FROM call_terms WHERE call_id = $2 AND workspace_id = $1
	), removed AS (
		DELETE FROM call_terms c WHERE c.call_id = $2 AND c.workspace_id = $1 AND c.term <> ALL($3::text[])
		RETURNING c.term
	), added AS (
		INSERT INTO call_terms (workspace_id, term, call_id, tf)
		SELECT $1, g.term, $2, g.tf FROM given g WHERE g.term NOT IN (SELECT term FROM old) ORDER BY g.term
		RETURNING term
	), changed AS (
		UPDATE call_terms c SET tf = g.tf FROM given g JOIN old o ON o.term = g.term
		WHERE c.workspace_id = $1 AND c.term = g.term AND c.call_id = $2 AND o.tf <> g.tf
	), counted AS (
		INSERT INTO call_term_counts AS k (workspace_id, term, calls)
		SELECT $1, term, 1 FROM added ORDER BY term
		ON CONFLICT (workspace_id, term) DO UPDATE SET calls = k.calls + 1
	), shrunk AS (
		UPDATE call_term_counts k SET calls = k.calls - 1 FROM removed r
		WHERE k.workspace_id = $1 AND k.term = r.term AND k.calls > 1
	)
	DELETE FROM call_term_counts k USING removed r WHERE k.workspace_id = $1 AND k.term = r.term AND k.calls <= 1`

// queueCallTerms queues the replacement of a call's postings by terms (none: their
// removal), checked beforehand.
func queueCallTerms(b *pgx.Batch, ws, id string, terms map[string]int) {
	names := make([]string, 0, len(terms))
	for term := range terms {
		names = append(names, term)
	}
	slices.Sort(names)
	tfs := make([]int16, len(names))
	for i, term := range names {
		tfs[i] = int16(terms[term])
	}
	b.Queue(setCallTermsSQL, ws, id, names, tfs)
}

// SetCallTerms implements service.CallSearchTx. The call's postings are found by its id:
// old is not needed.
func (t *tx) SetCallTerms(ws, id string, _, terms map[string]int) error {
	for term, tf := range terms {
		if tf < 1 || tf > 255 || term == "" || strings.IndexByte(term, 0) >= 0 {
			return fmt.Errorf("call %s: bad index term %q (frequency %d)", id, term, tf)
		}
	}
	var b pgx.Batch
	queueCallTerms(&b, ws, id, terms)
	return t.sendBatch(&b)
}

// searchQuery is a callQuery that also requires every term, with the statistics its
// scores use: the calls of the workspace and, per term, the calls holding it.
type searchQuery struct {
	*callQuery
	ws    string
	terms []string
	df    []int64
	calls int64
	// filtered: the walk checks filters on the calls it reaches (not only the terms).
	filtered bool
}

// postingsSource walks the postings of one term (the arm's "p.term = $n") newest first,
// each with its call. The call is read by a LATERAL subquery that LIMIT keeps apart from
// the join, so that the walk stays a lazy nested loop over the postings index: a join the
// planner may rewrite would, under the walk's LIMIT of maxCallScan, become a hash join of
// every posting and call, then a sort.
var postingsSource = &walkSource{
	from: "call_terms p CROSS JOIN LATERAL (SELECT " + callCols + " FROM calls WHERE id = p.call_id LIMIT 1) c WHERE p.workspace_id = $1",
	key:  "p.call_id",
	cols: "p.call_id AS id, " + strings.SplitN(qualified(callCols, "c"), ", ", 2)[1],
}

// bareSource walks the postings of one term alone, for a walk that needs only ids.
var bareSource = &walkSource{from: "call_terms p WHERE p.workspace_id = $1", key: "p.call_id", cols: "p.call_id AS id"}

// qualified prefixes each column of cols with table.
func qualified(cols, table string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = table + "." + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// newSearchQuery drives the walk by the smaller of the filter's scope and the rarest
// term's postings, as the bbolt engine does; the other terms are checked by one index
// lookup each per call walked (measured against an INTERSECT of the posting lists in
// BenchmarkCallSearch).
func (t *tx) newSearchQuery(ws string, agentIDs []string, f data.CallFilter, s data.CallSearch) (*searchQuery, error) {
	q, err := t.newCallQuery(ws, agentIDs, f)
	if err != nil {
		return nil, err
	}
	sq := &searchQuery{callQuery: q, ws: ws, terms: s.Terms, df: make([]int64, len(s.Terms))}
	q.binding += "\x00search\x00" + s.Sort + "\x00" + strings.Join(s.Terms, "\x00")
	if len(s.Terms) == 0 {
		q.empty = true
		return sq, nil
	}
	scopes, err := t.searchCounts(sq)
	if err != nil {
		return nil, err
	}
	rarest := 0
	for i := range s.Terms {
		if sq.df[i] < sq.df[rarest] {
			rarest = i
		}
	}
	var filterN int64
	for _, sc := range q.scopes {
		filterN += scopes[sc]
	}
	if sq.df[rarest] == 0 {
		q.empty = true // a term no call holds: nothing matches
		return sq, nil
	}
	arg := func(v any) string { q.args = append(q.args, v); return fmt.Sprintf("$%d", len(q.args)) }
	byPostings := q.cond == "" || sq.df[rarest] < filterN
	sq.filtered = len(q.residual) > 0 || byPostings && q.cond != ""
	if byPostings {
		if q.cond != "" {
			q.residual = append(q.residual, q.cond)
		}
		q.src, q.arms = postingsSource, []string{"p.term = " + arg(s.Terms[rarest])}
	}
	for i, term := range s.Terms {
		if byPostings && i == rarest {
			continue
		}
		// A scalar subquery rather than EXISTS: the planner may run an EXISTS as a hashed
		// subplan, reading every posting of the term, where the walk wants one lookup
		// per call it reaches.
		q.residual = append(q.residual, "(SELECT true FROM call_terms t WHERE t.workspace_id = $1 AND t.term = "+
			arg(term)+" AND t.call_id = w.id) IS NOT NULL")
	}
	return sq, nil
}

// searchCounts reads, in one round trip, the calls holding each term into sq.df, the
// workspace's calls into sq.calls, and the counts of the filter's scopes (returned).
func (t *tx) searchCounts(sq *searchQuery) (map[string]int64, error) {
	rows, err := t.query(`SELECT true, term, calls FROM call_term_counts WHERE workspace_id = $1 AND term = ANY($2::text[])
		UNION ALL SELECT false, scope, calls FROM call_scope_counts WHERE workspace_id = $1 AND scope = ANY($3::text[])`,
		sq.ws, sq.terms, append([]string{""}, sq.scopes...))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	scopes := map[string]int64{}
	for rows.Next() {
		var isTerm bool
		var name string
		var n int64
		if err := rows.Scan(&isTerm, &name, &n); err != nil {
			return nil, err
		}
		if !isTerm {
			scopes[name] = n
			continue
		}
		for i, term := range sq.terms {
			if term == name {
				sq.df[i] = n
			}
		}
	}
	sq.calls = scopes[""]
	return scopes, rows.Err()
}

// score is the call's relevance (fulltext.Stats.Score) from its term frequencies tfs
// (0 for a term the call lacks).
func (sq *searchQuery) score(tfs []int) int64 {
	return fulltext.Stats{Calls: sq.calls, DF: sq.df}.Score(tfs)
}

// scores returns the score of each call of ids.
func (sq *searchQuery) scores(t *tx, ids []string) (map[string]int64, error) {
	rows, err := t.query(`SELECT call_id, term, tf FROM call_terms
		WHERE workspace_id = $1 AND term = ANY($2::text[]) AND call_id = ANY($3::text[])`, sq.ws, sq.terms, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tfs := make(map[string][]int, len(ids))
	for rows.Next() {
		var id, term string
		var tf int
		if err := rows.Scan(&id, &term, &tf); err != nil {
			return nil, err
		}
		if tfs[id] == nil {
			tfs[id] = make([]int, len(sq.terms))
		}
		tfs[id][slices.Index(sq.terms, term)] = tf
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(ids))
	for _, id := range ids {
		out[id] = sq.score(tfs[id])
	}
	return out, nil
}

// SearchCalls implements service.CallSearchTx.
func (t *tx) SearchCalls(ws string, agentIDs []string, f data.CallFilter, s data.CallSearch, req data.PageRequest) ([]*data.CallHit, data.Page, error) {
	sq, err := t.newSearchQuery(ws, agentIDs, f, s)
	if err != nil {
		return nil, data.Page{}, err
	}
	var calls []*data.Call
	var scores map[string]int64
	var page data.Page
	if s.Sort == data.SortRelevance {
		calls, scores, page, err = sq.relevancePage(t, req)
	} else {
		calls, page, err = sq.page(t, req)
	}
	if err != nil || len(calls) == 0 {
		return nil, page, err
	}
	if scores == nil {
		ids := make([]string, len(calls))
		for i, c := range calls {
			ids[i] = c.ID
		}
		if scores, err = sq.scores(t, ids); err != nil {
			return nil, page, err
		}
	}
	hits := make([]*data.CallHit, len(calls))
	for i, c := range calls {
		hits[i] = &data.CallHit{Call: *c, Search: &data.SearchHit{Score: float64(scores[c.ID]) / 1000}}
	}
	return hits, page, nil
}
