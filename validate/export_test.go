package validate_test

import (
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// A document's suppression list is checked by the rules of an import of the list, each
// fault under suppressions.<i>, and bounded as that import is, at the edge and past it.
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

	rows := make([]data.ExportSuppression, validate.MaxSuppressionImport+1)
	for i := range rows {
		rows[i].PhoneNumber = "+14155550101"
	}
	var errs validate.Errors
	if n := validate.ImportSuppressions(rows[:validate.MaxSuppressionImport], &errs); len(n) != validate.MaxSuppressionImport {
		t.Errorf("at the bound: %d numbers", len(n))
	}
	checkField(t, errs.Err(), "")
	errs = validate.Errors{}
	validate.ImportSuppressions(rows, &errs)
	checkField(t, errs.Err(), "suppressions")
}
