package server

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// exportCalls writes calls through the export's own stream (headers, rows, flushes) in
// format, with the analysis columns of fields, and returns the body.
func exportCalls(t *testing.T, format string, fields []string, calls ...*data.Call) []byte {
	rec := httptest.NewRecorder()
	st := &callExportStream{w: rec, bw: bufio.NewWriter(rec), rc: http.NewResponseController(rec), format: format}
	if format == validate.ExportCSV {
		st.writeCSV(fields)
	} else {
		st.writeNDJSON()
	}
	for _, c := range calls {
		if err := st.write(c); err != nil {
			t.Fatal(err)
		}
	}
	st.finish(nil)
	return rec.Body.Bytes()
}

// formulaStart reports whether a spreadsheet would read a cell as a formula
// (docs/calls.md, "Formula injection"): it starts with =, +, -, @, a tab or a CR.
func formulaStart(cell string) bool {
	return cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0]))
}

// documentedCell is the cell docs/calls.md promises for a value: a single quote in front
// when it starts as a formula would, unless it is an E.164 number (+ and digits) or a
// plain decimal number; the value as it is otherwise.
func documentedCell(v string) string {
	if !formulaStart(v) {
		return v
	}
	if len(v) > 1 && v[0] == '+' && strings.Trim(v[1:], "0123456789") == "" {
		return v
	}
	if strings.Trim(v, "0123456789+-.eE") == "" {
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return v
		}
	}
	return "'" + v
}

// FuzzCallsExport writes a call holding any text in its free-text cells (disconnection
// reason, numbers, recording URL, transcript, an analysis field, metadata) through the
// calls export, as CSV and as NDJSON. Properties: the CSV reads back (encoding/csv) as the
// header and one row of as many cells; no cell a spreadsheet would read as a formula
// survives unless it is an E.164 or plain number; each cell reads back as the value
// docs/calls.md promises (the value, or a quote and the value). Each NDJSON line is one
// JSON object, the call.
func FuzzCallsExport(f *testing.F) {
	f.Add("user_hangup", "+14155550123", "hello", "=HYPERLINK(\"http://x\",\"y\")", "-2.5")
	f.Add("=1+1", "+1+cmd|' /C calc'!A0", "@SUM(A1)", "\tx", "-")
	f.Add("\r=1", "+", "line one\r\nline two\n=2", "-1e3", "-Inf")
	f.Add(" =1+1", "-5", "\"quoted\",comma", "+3", "\xff\xfe")
	f.Add("\n=1", "+1\n", "", "@", "1e999")
	f.Fuzz(func(t *testing.T, reason, number, content, analysisText, metaText string) {
		url := "https://example.com/" + reason
		c := &data.Call{ID: "call_1", WorkspaceID: "ws_1", AgentID: "agt_1", Direction: "inbound", Status: "ended",
			FromNumber: &number, ToNumber: &metaText, DisconnectionReason: &reason, RecordingURL: &url,
			Transcript: []data.TranscriptItem{{Role: "user", Content: content}, {Role: "agent", Content: analysisText}},
			Analysis:   map[string]any{"summary": analysisText, "score": json.Number("1")},
			Metadata:   map[string]any{"note": metaText},
		}
		if n, err := strconv.ParseFloat(metaText, 64); err == nil && !math.IsInf(n, 0) && !math.IsNaN(n) {
			c.Analysis["score"] = n
		}
		fields := []string{"summary", "score"}
		out := exportCalls(t, validate.ExportCSV, fields, c)
		r := csv.NewReader(bytes.NewReader(out))
		records, err := r.ReadAll()
		if err != nil || len(records) != 2 {
			t.Fatalf("the export reads back as %d records (%v):\n%q", len(records), err, out)
		}
		header, row := records[0], records[1]
		if len(row) != len(header) || len(header) != len(CallCSVColumns)+len(fields) {
			t.Fatalf("header of %d cells, row of %d", len(header), len(row))
		}
		meta, _ := json.Marshal(c.Metadata)
		values := map[string]string{"from_number": number, "to_number": metaText, "disconnection_reason": reason,
			"recording_url": url, "transcript": "user: " + content + "\nagent: " + analysisText,
			"analysis.summary": analysisText, "metadata": string(meta), "status": "ended"}
		for i, cell := range row {
			if formulaStart(cell) && documentedCell(cell) != cell {
				t.Fatalf("column %s holds %q, which a spreadsheet reads as a formula", header[i], cell)
			}
			v, ok := values[header[i]]
			if !ok {
				continue
			}
			// encoding/csv reads a quoted CRLF as LF.
			if want := strings.ReplaceAll(documentedCell(v), "\r\n", "\n"); cell != want {
				t.Fatalf("column %s reads back %q, want %q (the value %q)", header[i], cell, want, v)
			}
		}

		nd := exportCalls(t, validate.ExportNDJSON, nil, c, c)
		lines := strings.Split(strings.TrimSuffix(string(nd), "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("two calls in %d NDJSON lines: %q", len(lines), nd)
		}
		for _, line := range lines {
			var back map[string]any
			if err := json.Unmarshal([]byte(line), &back); err != nil || back["id"] != c.ID || back["disconnection_reason"] != jsonRoundTrip(reason) {
				t.Fatalf("NDJSON line %q is not the call (%v)", line, err)
			}
		}
	})
}

// jsonRoundTrip is s as a JSON reader gets it back from json.Marshal.
func jsonRoundTrip(s string) string {
	b, _ := json.Marshal(s)
	var out string
	json.Unmarshal(b, &out)
	return out
}
