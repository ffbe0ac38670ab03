package server

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// CSV uploads (docs/campaigns.md): a header line, then one row a line. A campaign's file
// has a phone_number column, an optional timezone column, and every other column is a
// variable (an empty cell gives none, so the agent's and number's values apply). Errors
// name the file's lines, counted from 1 with the header as line 1.

// csvTable is a CSV file's header and rows, with each row's line.
type csvTable struct {
	header []string
	rows   [][]string
	lines  []int
}

// maxCSVErrors bounds the line errors one upload reports: past them the file's problem
// is plain.
const maxCSVErrors = 50

// readCSV reads a whole CSV file. A line that cannot be parsed is a 422 naming it.
func readCSV(r io.Reader, what string) (*csvTable, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked here, to name the line
	cr.ReuseRecord = false
	t := &csvTable{}
	var errs validate.Errors
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				// The row's line, as every other fault of a row names it: a quote left open
				// is found lines later, at the end of the file.
				msg := fmt.Sprintf("Line %d: the CSV cannot be read (%v).", pe.StartLine, pe.Err)
				if pe.Line != pe.StartLine {
					msg = fmt.Sprintf("Line %d: the CSV cannot be read (%v, found at line %d: a quoted field opened on line %d runs on).", pe.StartLine, pe.Err, pe.Line, pe.StartLine)
				}
				errs.Add(fmt.Sprintf("%s.line_%d", what, pe.StartLine), msg)
				return nil, errs.Err()
			}
			return nil, data.Errorf(data.EMALFORMED, "The file cannot be read: %v.", err)
		}
		line, _ := cr.FieldPos(0)
		for i, f := range rec {
			// A line break in a quoted field reads as \n whichever way the file wrote it:
			// encoding/csv turns a line's final \r\n into \n but keeps a \r before it, so a
			// cell holding \r\n would read back, once written out again, as \n.
			rec[i] = strings.ReplaceAll(strings.ReplaceAll(f, "\r\n", "\n"), "\r", "\n")
		}
		if slices.ContainsFunc(rec, func(f string) bool { return strings.IndexByte(f, 0) >= 0 }) {
			// No engine keeps such text alike (PostgreSQL cannot store it at all).
			errs.Addf(fmt.Sprintf("%s.line_%d", what, line), "Line %d: a field holds U+0000 (a NUL character).", line)
			return nil, errs.Err()
		}
		if t.header == nil {
			t.header = rec
			for i, h := range t.header {
				t.header[i] = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) // a spreadsheet's byte order mark
			}
			continue
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a blank line
		}
		if len(rec) != len(t.header) && errs.Len() < maxCSVErrors {
			errs.Addf(fmt.Sprintf("%s.line_%d", what, line), "Line %d has %s; the header has %d.", line, fieldCount(len(rec)), len(t.header))
		}
		t.rows, t.lines = append(t.rows, rec), append(t.lines, line)
	}
	if t.header == nil {
		return nil, data.FieldError("file", "The file is empty: it must start with a header line naming a phone_number column.")
	}
	return t, errs.Err()
}

// column is the index of the header's column name, -1 when absent.
func (t *csvTable) column(name string) int { return slices.Index(t.header, name) }

// readRecipientsCSV reads a campaign's recipients; each keeps its line.
func readRecipientsCSV(r io.Reader) ([]data.RecipientInput, error) {
	t, err := readCSV(r, "recipients")
	if err != nil {
		return nil, err
	}
	phone, tz := t.column("phone_number"), t.column("timezone")
	var errs validate.Errors
	if phone < 0 {
		errs.Add("file", "The file's header must name a phone_number column.")
	}
	vars := map[int]string{}
	for i, h := range t.header {
		if i == phone || i == tz {
			continue
		}
		switch {
		case h == "":
			errs.Addf("file", "Column %d of the header has no name: every column but phone_number and timezone is a variable, named by its header.", i+1)
		case slices.Index(t.header, h) != i:
			errs.Addf("file", "The header names the column %q twice.", h)
		default:
			vars[i] = h
		}
	}
	if len(vars) > validate.MaxRecipientVariables {
		errs.Addf("file", "The file has %d variable columns; a recipient may have at most %d variables.", len(vars), validate.MaxRecipientVariables)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	out := make([]data.RecipientInput, 0, len(t.rows))
	for i, rec := range t.rows {
		in := data.RecipientInput{Line: t.lines[i], Variables: map[string]any{}}
		for j, cell := range rec {
			cell = strings.TrimSpace(cell)
			switch {
			case j == phone:
				in.PhoneNumber = cell
			case j == tz:
				if cell != "" {
					in.Timezone = &cell
				}
			case vars[j] != "" && cell != "":
				in.Variables[vars[j]] = cell
			}
		}
		out = append(out, in)
	}
	return out, nil
}

// readSuppressionsCSV reads a suppression list: a phone_number column and an optional
// reason column; other columns are ignored.
func readSuppressionsCSV(r io.Reader) ([]data.SuppressionCreate, error) {
	t, err := readCSV(r, "rows")
	if err != nil {
		return nil, err
	}
	phone, reason := t.column("phone_number"), t.column("reason")
	if phone < 0 {
		return nil, data.FieldError("file", "The file's header must name a phone_number column.")
	}
	out := make([]data.SuppressionCreate, 0, len(t.rows))
	for i, rec := range t.rows {
		in := data.SuppressionCreate{Line: t.lines[i]}
		if phone < len(rec) {
			in.PhoneNumber = strings.TrimSpace(rec[phone])
		}
		if reason >= 0 && reason < len(rec) {
			if s := strings.TrimSpace(rec[reason]); s != "" {
				in.Reason = &s
			}
		}
		out = append(out, in)
	}
	return out, nil
}

// fieldCount is n fields in words: "1 field" in the singular ("Line 4 has 1 fields" read
// wrong on the console).
func fieldCount(n int) string {
	if n == 1 {
		return "1 field"
	}
	return fmt.Sprintf("%d fields", n)
}
