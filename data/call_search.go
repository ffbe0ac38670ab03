package data

// Orders of a call list (GET /api/v1/calls?sort=).
const (
	// SortCreatedAt lists newest first; the default, with or without q.
	SortCreatedAt = "created_at"
	// SortRelevance lists the best matches of q first (q required).
	SortRelevance = "relevance"
)

// CallSorts lists every sort order.
var CallSorts = []string{SortCreatedAt, SortRelevance}

// RelevanceWindow is how many matches sort=relevance ranks: the newest RelevanceWindow
// calls matching q (and the filters), at the time of the first page. Keyset pages over a
// score need a fixed set to rank; older matches are reached with sort=created_at.
const RelevanceWindow = 1000

// CallSearch is a transcript search: q's terms (AND) and the order of the hits.
type CallSearch struct {
	// Q is the query as given; Terms are its distinct normalized terms.
	Q     string
	Terms []string
	// Sort is SortCreatedAt or SortRelevance.
	Sort string
}

// Span is a range of characters (Unicode code points) [Start, End) of a snippet.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// SearchHit says why a call matched q.
type SearchHit struct {
	// Score ranks the hit under sort=relevance: greater is better; comparable only within
	// one query.
	Score float64 `json:"score"`
	// Field is where the snippet comes from: "transcript[3].content",
	// "analysis.summary", "variables.customer".
	Field string `json:"field"`
	// Snippet is up to about 160 characters of that field around the first match.
	Snippet string `json:"snippet"`
	// Highlights are the matched words in Snippet.
	Highlights []Span `json:"highlights"`
}

// CallHit is a call found by a search, with why it matched.
type CallHit struct {
	Call
	Search *SearchHit `json:"search,omitempty"`
}

// CallExport asks for every call matching a list's filters and, with Search.Terms, its
// search, newest first, from Cursor (a cursor an earlier export returned) on, at most
// Limit calls (0: all).
type CallExport struct {
	Filter CallFilter
	Search CallSearch
	Cursor string
	Limit  int
}
