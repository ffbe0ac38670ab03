package validate

import (
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/fulltext"
)

// Bounds of a transcript search (GET /api/v1/calls?q=, docs/calls.md).
const (
	// MaxSearchQueryLen bounds q in characters: a query is a few words, not a document.
	MaxSearchQueryLen = 256
	// MaxSearchTerms bounds q's distinct words: each is one postings lookup per candidate.
	MaxSearchTerms = 8
	// MaxExportLimit bounds limit, the calls one export response streams at most.
	MaxExportLimit = 10_000_000
)

// Export formats (GET /api/v1/calls/export?format=).
const (
	ExportNDJSON = "ndjson"
	ExportCSV    = "csv"
)

// ExportFormats lists every export format.
var ExportFormats = []string{ExportNDJSON, ExportCSV}

// CallSearchParams reads q and sort of GET /api/v1/calls (and of its export), naming every
// bad parameter: q given must hold 1 to MaxSearchTerms words within MaxSearchQueryLen
// characters; sort is created_at (the default) or relevance, which needs q.
func CallSearchParams(q url.Values) (data.CallSearch, error) {
	var errs Errors
	s := data.CallSearch{Q: q.Get("q"), Sort: enumParam(&errs, q, "sort", data.CallSorts)}
	if s.Sort == "" {
		s.Sort = data.SortCreatedAt
	}
	if q.Has("q") {
		switch n := utf8.RuneCountInString(s.Q); {
		case n > MaxSearchQueryLen:
			errs.Addf("q", "The q parameter must not be longer than %d characters; it is %d.", MaxSearchQueryLen, n)
		default:
			s.Terms = fulltext.QueryTerms(s.Q)
			if len(s.Terms) == 0 {
				errs.Add("q", "The q parameter must hold at least one word (letters or digits).")
			} else if len(s.Terms) > MaxSearchTerms {
				errs.Addf("q", "The q parameter must not hold more than %d distinct words; it holds %d.", MaxSearchTerms, len(s.Terms))
			}
		}
	}
	if s.Sort == data.SortRelevance && !q.Has("q") {
		errs.Add("sort", "The sort parameter may be relevance only with q.")
	}
	return s, errs.Err()
}

// ExportParams reads format and limit of GET /api/v1/calls/export: format is ndjson
// (the default) or csv; limit, when given, is 1 to MaxExportLimit.
func ExportParams(q url.Values) (format string, limit int, err error) {
	var errs Errors
	format = enumParam(&errs, q, "format", ExportFormats)
	if format == "" {
		format = ExportNDJSON
	}
	if q.Has("limit") {
		n, convErr := strconv.Atoi(q.Get("limit"))
		if convErr != nil || n < 1 || n > MaxExportLimit {
			errs.Addf("limit", "The limit parameter must be an integer from 1 to %d.", MaxExportLimit)
		}
		limit = n
	}
	if q.Has("sort") {
		errs.Add("sort", "An export is always newest first; leave sort out.")
	}
	return format, limit, errs.Err()
}
