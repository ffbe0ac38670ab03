package validate_test

import (
	"errors"
	"regexp"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/phone"
	"github.com/voiceapi/voiceapi/validate"
)

var e164Form = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

// FuzzPhoneNumber feeds any text, read in any region, to the number check of suppression
// lists and campaign recipients (conventions §25). An accepted number comes back in the
// form ^\+[1-9][0-9]{1,14}$, and normalizing it again, in no region or in the same one,
// gives it back unchanged (so a number stored once is found again whichever way it was
// written). A refused one is a validation_failed error naming exactly the row's
// phone_number, for the suppression import and for the campaign alike.
func FuzzPhoneNumber(f *testing.F) {
	for _, c := range [][2]string{
		{"+14155550123", ""}, {" +1 (415) 555-0123 ", ""}, {"(415) 555-0123", "US"},
		{"011 33 1 42 68 53 00", "US"}, {"0044 20 7946 0958", "FR"}, {"01 42 68 53 00", "FR"},
		{"(415) 555-0123", ""}, {"+1 415", ""}, {"+1 415 555 0123 4567 8", ""}, {"call me", "US"},
		{"+1 415 555 0123 ext. 12", "US"}, {"tel:+1-415-555-0123", ""}, {"+800 1234 5678", ""},
		{"+1\xff415", "US"}, {"++14155550123", ""}, {"0", "ZZ"}, {"+882 1234 5678", "xx"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, raw, region string) {
		out, err := validate.Suppressions([]data.SuppressionCreate{{PhoneNumber: raw, Line: 2}}, region, false)
		if err != nil {
			refusedAt(t, err, "rows.line_2.phone_number", raw)
			if _, ok := phone.Normalize(raw, region); ok {
				t.Fatalf("%q (%s) refused by Suppressions but normalized", raw, region)
			}
			return
		}
		e164 := out[0]
		if !e164Form.MatchString(e164) {
			t.Fatalf("%q (%s) accepted as %q, not E.164", raw, region, e164)
		}
		for _, again := range []string{"", region} {
			if got, ok := phone.Normalize(e164, again); !ok || got != e164 {
				t.Fatalf("%q (%s) normalized to %q, which normalized again in %q gives %q, %v", raw, region, e164, again, got, ok)
			}
		}
	})
}

// refusedAt fails t unless err is validation_failed with path as its only field.
func refusedAt(t *testing.T, err error, path, raw string) {
	t.Helper()
	var de *data.Error
	if !errors.As(err, &de) || de.Code != data.EINVALID || len(de.Fields) != 1 || len(de.Fields[path]) == 0 {
		t.Fatalf("%q refused with %#v, want %s naming %s only", raw, err, data.EINVALID, path)
	}
}
