package fulltext

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Stats are the figures a relevance score is computed from: the calls of the workspace
// and, per query term, the calls holding it. A relevance cursor carries the first page's,
// so that calls added later change no score of a later page.
type Stats struct {
	Calls int64
	DF    []int64
}

// bm25K1 is BM25's term frequency saturation.
const bm25K1 = 1.2

// Score is a BM25 sum over the terms without length normalization, in thousandths (an
// integer, so that a cursor holds it exactly); tfs[i] is how often the call holds term
// i (0: not at all).
func (s Stats) Score(tfs []int) int64 {
	var sum float64
	n := float64(s.Calls)
	for i, tf := range tfs {
		if tf == 0 {
			continue
		}
		f, df := float64(tf), float64(s.DF[i])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		sum += idf * f * (bm25K1 + 1) / (f + bm25K1)
	}
	return int64(math.Round(sum * 1000))
}

// Ranked is one call of a relevance window: its score and id.
type Ranked struct {
	Score int64
	ID    string
}

// Before reports whether a ranks before b: a higher score, then a newer id.
func (a Ranked) Before(b Ranked) bool {
	return a.Score > b.Score || a.Score == b.Score && a.ID > b.ID
}

// CursorKey is a relevance cursor's id, "<anchor>\x00<calls>\x00<df,df…>\x00<score>\x00<call id>":
// the window's newest match, the statistics the first page scored with, and the page's
// edge call r. The engines sign it like any cursor id.
func (s Stats) CursorKey(anchor string, r Ranked) string {
	dfs := make([]string, len(s.DF))
	for i, n := range s.DF {
		dfs[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join([]string{anchor, strconv.FormatInt(s.Calls, 10), strings.Join(dfs, ","),
		strconv.FormatInt(r.Score, 10), r.ID}, "\x00")
}

// ParseCursorKey reads what CursorKey wrote for a query of terms terms; ok is false when
// key is not one.
func ParseCursorKey(key string, terms int) (anchor string, s Stats, r Ranked, ok bool) {
	parts := strings.Split(key, "\x00")
	if len(parts) != 5 || parts[0] == "" {
		return "", Stats{}, Ranked{}, false
	}
	calls, err1 := strconv.ParseInt(parts[1], 10, 64)
	score, err2 := strconv.ParseInt(parts[3], 10, 64)
	dfs := strings.Split(parts[2], ",")
	if err1 != nil || err2 != nil || len(dfs) != terms {
		return "", Stats{}, Ranked{}, false
	}
	s = Stats{Calls: calls, DF: make([]int64, terms)}
	for i, d := range dfs {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil {
			return "", Stats{}, Ranked{}, false
		}
		s.DF[i] = n
	}
	return parts[0], s, Ranked{score, parts[4]}, true
}

// PageBounds sorts a relevance window by rank and returns the page's slice [lo, hi) of
// it: the first perPage without a cursor (key nil); with one, the perPage ranked after
// key (older) or the perPage ranked before it.
func PageBounds(window []Ranked, perPage int, key *Ranked, older bool) (lo, hi int) {
	slices.SortFunc(window, func(a, b Ranked) int {
		if a.Before(b) {
			return -1
		}
		return 1
	})
	if key == nil {
		return 0, min(perPage, len(window))
	}
	at, found := slices.BinarySearchFunc(window, *key, func(e, k Ranked) int {
		switch {
		case e == k:
			return 0
		case e.Before(k):
			return -1
		}
		return 1
	})
	if older {
		if found {
			at++
		}
		return at, min(at+perPage, len(window))
	}
	return max(0, at-perPage), at
}
