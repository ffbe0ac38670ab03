package validate_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// A document's suppression list is checked by the rules of an import of the list, each
// fault under suppressions.<i>, and bounded as a workspace's list is (not as one import
// of the list is), at the edge and past it.
func TestImportSuppressions(t *testing.T) {
	reason := func(n int) *string { s := strings.Repeat("r", n); return &s }
	cases := []struct {
		row   data.ExportSuppression
		field string
	}{
		{data.ExportSuppression{PhoneNumber: "+1 415 555 0101", Reason: reason(validate.MaxSuppressionReason)}, ""},
		{data.ExportSuppression{PhoneNumber: "+14155550101", Reason: reason(validate.MaxSuppressionReason + 1)}, "suppressions.0.reason"},
		{data.ExportSuppression{PhoneNumber: "4155550101"}, "suppressions.0.phone_number"},
		{data.ExportSuppression{PhoneNumber: ""}, "suppressions.0.phone_number"},
	}
	for _, c := range cases {
		var errs validate.Errors
		numbers := validate.ImportSuppressions([]data.ExportSuppression{c.row}, &errs)
		checkField(t, errs.Err(), c.field)
		if c.field == "" && numbers[0] != "+14155550101" {
			t.Errorf("%q normalized to %q", c.row.PhoneNumber, numbers[0])
		}
	}

	// At the bound the rows are read one by one (blank numbers, quick to refuse, so that
	// the test does not parse half a million numbers); one past it the list is refused
	// whole, before any row is read.
	rows := make([]data.ExportSuppression, validate.MaxSuppressions+1)
	var errs validate.Errors
	validate.ImportSuppressions(rows[:validate.MaxSuppressions], &errs)
	// Every row is read and counted; the first data.MaxFaults are kept.
	kept := validate.Index("suppressions", data.MaxFaults-1) + ".phone_number"
	if errs.Has("suppressions") || !errs.Has(kept) || errs.Len() != data.MaxFaults || errs.Len()+errs.Omitted() != validate.MaxSuppressions {
		t.Errorf("at the bound: the list refused whole %v, row %s kept %v, %d faults kept and %d counted",
			errs.Has("suppressions"), kept, errs.Has(kept), errs.Len(), errs.Omitted())
	}
	errs = validate.Errors{}
	validate.ImportSuppressions(rows, &errs)
	checkField(t, errs.Err(), "suppressions")
	if errs.Len() != 1 {
		t.Errorf("past the bound: %d faults, want the list's alone", errs.Len())
	}
}
