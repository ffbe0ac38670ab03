package validate

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
)

// FuzzCallAnalysis decodes any body's analysis member strictly, as a call update is, and
// checks it against an analysis_config with a field of every type (conventions §24). The
// fault on analysis.<name> is there exactly when the value breaks its declaration: a
// string of at most MaxAnalysisText characters, a number, a boolean, one of the enum's
// choices, a calendar date written YYYY-MM-DD; null or absent only when not required;
// call_successful a boolean and summary a string. No other path is ever named.
func FuzzCallAnalysis(f *testing.F) {
	for _, s := range []string{
		`{"outcome":"booked","guests":4,"vip":true,"day":"2026-03-02","note":"window seat"}`,
		`{"outcome":"Booked","guests":"4","vip":1,"day":"2026-02-30","note":{"a":1}}`,
		`{"outcome":null,"guests":null,"day":"2024-02-29","call_successful":"yes","summary":3}`,
		`{"day":"2026-3-02","mood":"happy","score":[1,2],"summary":"\ud800"}`,
		`{"outcome":"declined","day":"0000-01-01","guests":-0.5e-300,"note":"` + strings.Repeat("é", MaxAnalysisText) + `"}`,
		`{"outcome":"declined","note":"` + strings.Repeat("x", MaxAnalysisText+1) + `"}`,
		`{"outcome":"declined","day":"+2026-03-02","call_successful":false,"summary":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in data.CallUpdate
		if err := strictjson.Decode(append(append([]byte(`{"analysis":`), body...), '}'), &in); err != nil || !in.Analysis.Set {
			return
		}
		analysis := in.Analysis.V
		var errs Errors
		CallAnalysis(&errs, analysis, bookingFields)
		faults := map[string]bool{}
		if err := errs.Err(); err != nil {
			for p := range err.(*data.Error).Fields {
				faults[p] = true
			}
		}
		expect := map[string]bool{}
		for _, fd := range bookingFields.Fields {
			x, given := analysis[fd.Name]
			if !given || x == nil {
				expect["analysis."+fd.Name] = fd.Required
				continue
			}
			expect["analysis."+fd.Name] = !holdsType(fd, x)
		}
		if x, given := analysis[data.AnalysisKeySuccessful]; given && x != nil {
			_, isBool := x.(bool)
			expect["analysis."+data.AnalysisKeySuccessful] = !isBool
		}
		if x, given := analysis[data.AnalysisKeySummary]; given && x != nil {
			expect["analysis."+data.AnalysisKeySummary] = !holdsType(data.AnalysisField{Type: data.AnalysisString}, x)
		}
		for p := range faults {
			if !expect[p] {
				t.Fatalf("analysis %s: fault on %s, whose value %#v holds", body, p, analysis[strings.TrimPrefix(p, "analysis.")])
			}
		}
		for p, bad := range expect {
			if bad && !faults[p] {
				t.Fatalf("analysis %s: %s = %#v accepted", body, p, analysis[strings.TrimPrefix(p, "analysis.")])
			}
		}
	})
}

// holdsType is the oracle: whether the non-null x is a value of the declared field.
func holdsType(fd data.AnalysisField, x any) bool {
	switch fd.Type {
	case data.AnalysisString:
		s, ok := x.(string)
		return ok && utf8.RuneCountInString(s) <= MaxAnalysisText
	case data.AnalysisNumber:
		// Decoded strictly, a number is a json.Number whose text is kept, and one that
		// fits a float64.
		n, ok := x.(json.Number)
		_, err := n.Float64()
		return ok && err == nil
	case data.AnalysisBoolean:
		_, ok := x.(bool)
		return ok
	case data.AnalysisEnum:
		s, ok := x.(string)
		return ok && slices.Contains(fd.Choices, s)
	case data.AnalysisDate:
		s, ok := x.(string)
		d, err := time.Parse(time.DateOnly, s)
		return ok && err == nil && d.Format(time.DateOnly) == s
	}
	return false
}
