package postgres

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// searchModel is what the index should answer, kept in Go: each call and its terms.
type searchModel struct {
	calls map[string]*data.Call
	terms map[string]map[string]int
}

var searchVocab = []string{"cancel", "refund", "order", "hello", "card", "friday", "agent", "late"}

func randomTerms(rng *rand.Rand) map[string]int {
	out := map[string]int{}
	for _, w := range searchVocab {
		if rng.IntN(3) == 0 {
			out[w] = 1 + rng.IntN(4)
		}
	}
	return out
}

// matches lists the model's calls of ws that hold every term and pass the filter and
// the agent restriction, newest first.
func (m *searchModel) matches(ws string, agents []string, f data.CallFilter, terms []string) []string {
	var out []string
	for id, c := range m.calls {
		if c.WorkspaceID != ws || agents != nil && !slices.Contains(agents, c.AgentID) || !filterKeeps(f, c) || len(terms) == 0 {
			continue
		}
		all := true
		for _, t := range terms {
			all = all && m.terms[id][t] > 0
		}
		if all {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

func filterKeeps(f data.CallFilter, c *data.Call) bool {
	return (f.AgentID == "" || c.AgentID == f.AgentID) && (f.Status == "" || c.Status == f.Status) &&
		(f.Direction == "" || c.Direction == f.Direction) &&
		(f.NumberID == "" || c.NumberID != nil && *c.NumberID == f.NumberID) &&
		(f.From.IsZero() || !c.CreatedAt.Before(f.From)) && (f.To.IsZero() || c.CreatedAt.Before(f.To))
}

// score is the BM25 sum without length normalization the engines rank by, in thousandths.
func (m *searchModel) score(ws, id string, terms []string) int64 {
	n, s := 0.0, 0.0
	for _, c := range m.calls {
		if c.WorkspaceID == ws {
			n++
		}
	}
	for _, t := range terms {
		tf := float64(m.terms[id][t])
		if tf == 0 {
			continue
		}
		df := 0.0
		for cid, ts := range m.terms {
			if m.calls[cid].WorkspaceID == ws && ts[t] > 0 {
				df++
			}
		}
		s += math.Log(1+(n-df+0.5)/(df+0.5)) * tf * 2.2 / (tf + 1.2)
	}
	return int64(math.Round(s * 1000))
}

// walkSearch reads every page of a search forward, then back from the last page by its
// previous cursors, and returns both (the second in list order) with the hits' scores.
func walkSearch(t *testing.T, tx service.Tx, ws string, agents []string, f data.CallFilter, s data.CallSearch) (fwd, back []string, scores map[string]float64) {
	t.Helper()
	scores = map[string]float64{}
	req := data.PageRequest{PerPage: 3}
	var last data.Page
	var lastIDs []string
	for range 1000 {
		hits, page, err := tx.SearchCalls(ws, agents, f, s, req)
		if err != nil {
			t.Fatal(err)
		}
		lastIDs = nil
		for _, h := range hits {
			fwd = append(fwd, h.ID)
			lastIDs = append(lastIDs, h.ID)
			scores[h.ID] = h.Search.Score
		}
		last = page
		if page.NextCursor == nil {
			break
		}
		req.Cursor = *page.NextCursor
	}
	// Back: the last page's own hits, then every previous page before them.
	pages := [][]string{lastIDs}
	for cur := last.PrevCursor; cur != nil; {
		hits, page, err := tx.SearchCalls(ws, agents, f, s, data.PageRequest{PerPage: 3, Cursor: *cur})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		pages = append(pages, ids)
		cur = page.PrevCursor
	}
	slices.Reverse(pages)
	back = slices.Concat(pages...)
	return fwd, back, scores
}

// Random writes keep the postings and their counts exact, and every search answers what
// a brute-force reading of the model answers: the hits newest first (with a scan bound
// small enough that pages end early), the ranking of sort=relevance, the scores, and the
// previous cursors leading back through the same hits.
func TestCallSearchAgainstModel(t *testing.T) {
	db := openCallsTestDB(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	at := time.Date(2026, 11, 20, 7, 40, 0, 0, time.UTC)
	ids := &data.IDGen{Now: func() time.Time { at = at.Add(time.Duration(1+rng.IntN(90)) * time.Second); return at }, Rand: rand.NewChaCha8([32]byte{9})}
	m := &searchModel{calls: map[string]*data.Call{}, terms: map[string]map[string]int{}}
	all := m.seed(t, db, rng, ids)
	m.churn(t, db, rng, all)
	if n, err := CallTermCountMismatches(ctx, db); err != nil || n != 0 {
		t.Fatalf("call_term_counts differs from the postings in %d rows (%v)", n, err)
	}

	defer SetMaxCallScan(7)()
	from := data.IDTime(data.PrefixCall, all[len(all)/3])
	queries := []struct {
		agents []string
		f      data.CallFilter
	}{
		{nil, data.CallFilter{}},
		{nil, data.CallFilter{AgentID: "agt_B"}},
		{[]string{"agt_A", "agt_C"}, data.CallFilter{}},
		{nil, data.CallFilter{Status: data.CallEnded, Direction: data.DirectionInbound}},
		{nil, data.CallFilter{NumberID: "num_2", From: from}},
	}
	err := db.View(ctx, func(tx service.Tx) error {
		for _, q := range queries {
			for _, terms := range [][]string{{"cancel"}, {"refund", "card"}, {"late", "order", "hello"}, {"zebra"}} {
				m.checkSearch(t, tx, q.agents, q.f, terms)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seed stores 240 random calls with random terms, three in four of ws_1, and keeps them
// in the model; it returns their ids in order.
func (m *searchModel) seed(t *testing.T, db *DB, rng *rand.Rand, ids *data.IDGen) []string {
	t.Helper()
	agents := []string{"agt_A", "agt_B", "agt_C"}
	numbers := []string{"num_1", "num_2"}
	updateTx(t, db, func(tx *tx) error {
		for range 240 {
			c := randomCall(rng, ids.New(data.PrefixCall), []string{"ws_1", "ws_1", "ws_1", "ws_2"}[rng.IntN(4)], agents, numbers)
			terms := randomTerms(rng)
			if err := tx.InsertCall(c); err != nil {
				return err
			}
			if err := tx.SetCallTerms(c.WorkspaceID, c.ID, nil, terms); err != nil {
				return err
			}
			m.calls[c.ID], m.terms[c.ID] = c, terms
		}
		return nil
	})
	return slices.Sorted(func(yield func(string) bool) {
		for id := range m.calls {
			if !yield(id) {
				return
			}
		}
	})
}

// churn gives 80 random calls of all new terms (some the same, some none) and deletes up
// to 40, in the store and the model alike.
func (m *searchModel) churn(t *testing.T, db *DB, rng *rand.Rand, all []string) {
	t.Helper()
	updateTx(t, db, func(tx *tx) error {
		for range 80 {
			id := all[rng.IntN(len(all))]
			terms := randomTerms(rng)
			if rng.IntN(5) == 0 {
				terms = m.terms[id]
			}
			if err := tx.SetCallTerms(m.calls[id].WorkspaceID, id, m.terms[id], terms); err != nil {
				return err
			}
			m.terms[id] = terms
		}
		for range 40 {
			id := all[rng.IntN(len(all))]
			if m.calls[id] == nil {
				continue
			}
			if err := tx.DeleteCall(id, m.terms[id]); err != nil {
				return err
			}
			delete(m.calls, id)
			delete(m.terms, id)
		}
		return nil
	})
}

// checkSearch walks one search of ws_1 under each sort, forward and back, and holds the
// ids and scores to the model's. Relevance is checked with a scan window that holds
// every match; the window is 7 otherwise.
func (m *searchModel) checkSearch(t *testing.T, tx service.Tx, agents []string, f data.CallFilter, terms []string) {
	t.Helper()
	want := m.matches("ws_1", agents, f, terms)
	for _, sort := range data.CallSorts {
		if sort == data.SortRelevance {
			maxCallScan = 20000 // the window then holds every match
			slices.SortStableFunc(want, func(a, b string) int {
				return cmp.Compare(m.score("ws_1", b, terms), m.score("ws_1", a, terms))
			})
		}
		fwd, back, scores := walkSearch(t, tx, "ws_1", agents, f, data.CallSearch{Terms: terms, Sort: sort})
		if !slices.Equal(fwd, want) {
			t.Errorf("%v %+v %v %s:\n got %v\nwant %v", agents, f, terms, sort, fwd, want)
		}
		if !slices.Equal(back, want) {
			t.Errorf("%v %+v %v %s, back:\n got %v\nwant %v", agents, f, terms, sort, back, want)
		}
		for id, s := range scores {
			if w := float64(m.score("ws_1", id, terms)) / 1000; s != w {
				t.Errorf("score of %s for %v: %v, want %v", id, terms, s, w)
			}
		}
	}
	maxCallScan = 7
}
