package openapi

import (
	"fmt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// The query parameters of a transcript search and of the call export.
var (
	searchQuery = queryParam{"q", fmt.Sprintf("Words to find in transcripts and in analysis and variables values "+
		"(case-insensitive, letters and digits; every word must match). 1 to %d distinct words, at most %d characters. "+
		"Each call listed then carries search: its score, the field and a snippet with the matched words' spans.",
		validate.MaxSearchTerms, validate.MaxSearchQueryLen),
		map[string]any{"type": "string", "minLength": 1, "maxLength": validate.MaxSearchQueryLen}}
	sortParam = queryParam{"sort", fmt.Sprintf("Order: created_at (newest first, the default) or relevance (q required; "+
		"the best of the newest %d matches first). A cursor is bound to its sort and q.", data.RelevanceWindow),
		map[string]any{"type": "string", "enum": []any{data.SortCreatedAt, data.SortRelevance}, "default": data.SortCreatedAt}}
	exportQuery = append(append([]queryParam{}, callFilters...), searchQuery,
		queryParam{"format", "ndjson (one call object a line, the default) or csv (a header row, then one row a call).",
			map[string]any{"type": "string", "enum": []any{validate.ExportNDJSON, validate.ExportCSV}, "default": validate.ExportNDJSON}},
		queryParam{"limit", "At most this many calls in this response; the Export-Cursor trailer then resumes after them.",
			map[string]any{"type": "integer", "minimum": 1, "maximum": validate.MaxExportLimit}},
		queryParam{"cursor", "The Export-Cursor trailer of an earlier export with the same filters and q: resumes after its last call.",
			map[string]any{"type": "string"}},
	)
)

func init() {
	opDocs["GET /api/v1/calls"] = opDoc{Tag: "Call History", Summary: "List or search calls",
		Description: "Newest first. With q, a transcript search: the calls holding every word of q, combined with the filters, " +
			"each with a search member (docs/calls.md, Search).",
		Out: data.CallHit{}, Shape: shapeList, Query: append(append([]queryParam{}, callFilters...), searchQuery, sortParam)}
	opDocs["GET /api/v1/calls/export"] = opDoc{Tag: "Call History", Summary: "Export calls as NDJSON or CSV, streamed",
		Description: "Every call the filters (and q) select, newest first, streamed in bounded batches. CSV columns: " +
			fmt.Sprint(csvColumnsDoc) + ", then one analysis.<name> column per field the export's agents declare (analysis_config.fields, " +
			"and call_successful and summary when asked for); transcript is the utterances as \"role: content\" lines, variables, analysis and " +
			"metadata are JSON, cost a decimal in cost_currency. Trailers: Export-Count (calls sent) and Export-Cursor (empty when the export is complete; " +
			"else pass it as cursor to resume). docs/calls.md, Export.",
		Shape: shapeRaw, Media: "application/x-ndjson", AltMedia: []string{"text/csv"}, Query: exportQuery}
}

// csvColumnsDoc is the CSV header row (server.CallCSVColumns, which TestCallCSVColumnsDocumented
// holds to this list).
var csvColumnsDoc = []string{
	"id", "workspace_id", "agent_id", "agent_version", "number_id", "direction",
	"from_number", "to_number", "status", "started_at", "ended_at", "duration_ms",
	"disconnection_reason", "recording_url", "created_at", "updated_at",
	"transcript", "variables", "analysis", "metadata",
	"analysis_source", "analyzed_at", "cost", "cost_currency",
}

// CSVColumns returns the documented CSV header row of the call export.
func CSVColumns() []string { return append([]string(nil), csvColumnsDoc...) }
