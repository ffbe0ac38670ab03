package server

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// Trailers of a call export: the cursor that resumes it when it ended before the last
// call (limit reached, or the server cut it), empty when it is complete, and how many
// calls it holds.
const (
	TrailerExportCursor = "Export-Cursor"
	TrailerExportCount  = "Export-Count"
)

// CallCSVColumns is the header row of a CSV export, in order. It is stable: columns are
// only ever added at the end. transcript is the text of the utterances, one per line as
// "role: content"; variables, analysis and metadata are JSON objects; cost is the total
// as a decimal in cost_currency; absent values are empty cells. After these come the
// analysis.<name> columns of the export's agents' declared fields (AnalysisService's
// ExportFields), one per field.
var CallCSVColumns = []string{
	"id", "workspace_id", "agent_id", "agent_version", "number_id", "direction",
	"from_number", "to_number", "status", "started_at", "ended_at", "duration_ms",
	"disconnection_reason", "recording_url", "created_at", "updated_at",
	"transcript", "variables", "analysis", "metadata",
	"analysis_source", "analyzed_at", "cost", "cost_currency",
}

// exportFlushEvery is how many calls go out between explicit flushes: a consumer sees
// calls as they come even when they are small.
const exportFlushEvery = 64

// handleCallExport: GET /api/v1/calls/export?format=ndjson|csv&limit&cursor and the list's
// filters and q — every matching call, newest first, streamed as it is read.
func (s *Server) handleCallExport(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f, filterErr := validate.CallFilterParams(q)
	search, searchErr := validate.CallSearchParams(q)
	format, limit, exportErr := validate.ExportParams(q)
	ctx := data.WithInputFaults(r.Context(), withQueryFaults(r, validate.Combine(filterErr, searchErr, exportErr)))
	x := data.CallExport{Filter: f, Search: search, Cursor: q.Get("cursor"), Limit: limit}

	st := &callExportStream{w: w, bw: bufio.NewWriterSize(w, 32<<10), rc: http.NewResponseController(w), format: format}
	// The request is read whole (a GET has no body), but the read deadline still runs: when
	// it passes, the server's read behind the request fails and cancels the request's
	// context, cutting an export of more than the read timeout. Only the write deadline,
	// moved by each write (a Long route), should bound a long stream.
	if err := st.rc.SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if format == validate.ExportCSV {
		fields, err := s.svc.AnalysisFigures.ExportFields(ctx, f.AgentID)
		if err != nil {
			return err
		}
		st.writeCSV(fields)
	} else {
		st.writeNDJSON()
	}
	next, err := s.svc.Calls.ExportCalls(ctx, x, st.write)
	if !st.started {
		if err != nil {
			return err // nothing sent yet: the conventions' error body
		}
		st.start()
	}
	if err != nil {
		s.log.Warn("call export cut", "error", err, "calls", st.n)
	}
	st.finish(next)
	return nil
}

// callExportStream writes an export's calls to the response as they are read: the headers
// before the first, an explicit flush every exportFlushEvery calls, the trailers at the end.
type callExportStream struct {
	w      http.ResponseWriter
	bw     *bufio.Writer
	rc     *http.ResponseController
	format string
	// fields are the analysis fields of a CSV export's extra columns.
	fields  []string
	row     func(*data.Call) error
	pending func() error // what sits above bw
	started bool
	n       int // calls written
}

// writeCSV makes the stream write rows of CallCSVColumns and the analysis columns of fields.
func (st *callExportStream) writeCSV(fields []string) {
	st.fields = fields
	cw := csv.NewWriter(st.bw)
	st.row = func(c *data.Call) error { return cw.Write(csvRecord(c, fields)) }
	st.pending = func() error { cw.Flush(); return cw.Error() }
}

// writeNDJSON makes the stream write one JSON call a line.
func (st *callExportStream) writeNDJSON() {
	enc := json.NewEncoder(st.bw)
	st.row = func(c *data.Call) error { return enc.Encode(c) }
	st.pending = func() error { return nil }
}

// start sends the status and headers, announcing the trailers, and a CSV header row.
func (st *callExportStream) start() {
	st.started = true
	h := st.w.Header()
	if st.format == validate.ExportCSV {
		h.Set("Content-Type", "text/csv; charset=utf-8")
	} else {
		h.Set("Content-Type", "application/x-ndjson")
	}
	h.Set("Content-Disposition", `attachment; filename="calls.`+st.format+`"`)
	h.Set("Cache-Control", "no-store")
	h.Set("Trailer", TrailerExportCursor+", "+TrailerExportCount)
	st.w.WriteHeader(http.StatusOK)
	if st.format == validate.ExportCSV {
		// Field names need no quoting: they match the tool-name pattern.
		st.bw.WriteString(strings.Join(append(slices.Clone(CallCSVColumns), analysisColumns(st.fields)...), ",") + "\r\n")
	}
}

// write sends one call, starting the response before the first.
func (st *callExportStream) write(c *data.Call) error {
	if !st.started {
		st.start()
	}
	if err := st.row(c); err != nil {
		return err
	}
	if st.n++; st.n%exportFlushEvery == 0 {
		return st.flush()
	}
	return nil
}

// flush pushes what is buffered to the client.
func (st *callExportStream) flush() error {
	if err := st.pending(); err != nil {
		return err
	}
	if err := st.bw.Flush(); err != nil {
		return err
	}
	if err := st.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// finish flushes the last calls and sets the trailers: the cursor that resumes the export
// (empty when it is complete) and the count.
func (st *callExportStream) finish(next *string) {
	st.flush()
	cursor := ""
	if next != nil {
		cursor = *next
	}
	st.w.Header().Set(TrailerExportCursor, cursor)
	st.w.Header().Set(TrailerExportCount, strconv.Itoa(st.n))
}

// analysisColumns names the analysis.<name> columns of fields.
func analysisColumns(fields []string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = "analysis." + f
	}
	return out
}

// analysisCell shows one analysis value: a string as it is, a number or boolean as JSON
// writes it, anything else as JSON; absent or null is empty.
func analysisCell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// csvRecord is one call as a row of CallCSVColumns and the analysis columns of fields.
func csvRecord(c *data.Call, fields []string) []string {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	num := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	tm := func(t *data.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(data.TimeLayout)
	}
	obj := func(m map[string]any) string {
		if m == nil {
			return ""
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	version := ""
	if c.AgentVersion != nil {
		version = strconv.Itoa(*c.AgentVersion)
	}
	var tr strings.Builder
	for i, it := range c.Transcript {
		if i > 0 {
			tr.WriteByte('\n')
		}
		tr.WriteString(it.Role + ": " + it.Content)
	}
	cost, currency := "", ""
	if c.Cost != nil {
		cost, currency = c.Cost.Total.String(), c.Cost.Currency
	}
	row := []string{
		c.ID, c.WorkspaceID, c.AgentID, version, str(c.NumberID), c.Direction,
		str(c.FromNumber), str(c.ToNumber), c.Status, tm(c.StartedAt), tm(c.EndedAt), num(c.DurationMS),
		str(c.DisconnectionReason), str(c.RecordingURL), tm(&c.CreatedAt), tm(&c.UpdatedAt),
		tr.String(), obj(c.Variables), obj(c.Analysis), obj(c.Metadata),
		str(c.AnalysisSource), tm(c.AnalyzedAt), cost, currency,
	}
	for _, f := range fields {
		row = append(row, analysisCell(c.Analysis[f]))
	}
	for i, cell := range row {
		row[i] = inertCell(cell)
	}
	return row
}

// inertCell keeps a spreadsheet from reading a cell as a formula (CSV injection, the
// OWASP rule): a cell starting with =, +, -, @, a tab or a carriage return gets a single
// quote in front, which spreadsheets show as text and do not evaluate. A phone number in
// E.164 form (+ and digits only) is left as it is: it holds no formula, and the quote would
// spoil the most common value of from_number and to_number; nor is a plain number.
func inertCell(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) || e164Cell(s) || numberCell(s) {
		return s
	}
	return "'" + s
}

// numberCell reports whether s is a plain decimal number (a negative analysis figure):
// digits, a sign, a point and an exponent only, which a spreadsheet reads as a number.
func numberCell(s string) bool {
	if strings.Trim(s, "0123456789+-.eE") != "" {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// e164Cell reports whether s is + and one or more digits.
func e164Cell(s string) bool {
	if len(s) < 2 || s[0] != '+' {
		return false
	}
	for _, r := range s[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
