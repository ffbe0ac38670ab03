// Package phone normalizes phone numbers to E.164 (conventions §25): campaign recipients
// and suppression lists arrive from spreadsheets, written as people write numbers.
//
// It stands on github.com/nyaruka/phonenumbers, the Go port of Google's libphonenumber:
// national formats, trunk prefixes and country calling codes differ by country, and
// libphonenumber's metadata is the maintained record of them.
package phone

import (
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// Normalize returns raw as an E.164 number ("+" and up to 15 digits). A number written
// without its country (no "+" or international prefix) is read as a number of region
// (ISO 3166 alpha-2, "US"); with region "" only international numbers are accepted.
// It reports false for a number that cannot be read, whose length no number of its
// country has, or whose E.164 form does not read back as itself.
func Normalize(raw, region string) (string, bool) {
	s := strings.TrimSpace(raw)
	if s == "" || len(s) > 64 {
		return "", false
	}
	if region == "" {
		region = "ZZ" // unknown: only "+..." and "00..." numbers parse
	}
	out, ok := format(s, region)
	if ok && out == s {
		return out, true // written in E.164 already: reading it back is the parse just done
	}
	// The result must read back as itself: libphonenumber reads some numbers (national
	// "000000000" in AX gives +358000000000, which reads as +35800000000) differently once
	// in E.164, and a number stored in one form would not match the same number written in
	// the other (a suppression would miss its recipient).
	if again, _ := format(out, "ZZ"); !ok || again != out {
		return "", false
	}
	return out, true
}

// format parses s in region and writes it in E.164, if it is a possible number.
func format(s, region string) (string, bool) {
	n, err := phonenumbers.Parse(s, region)
	if err != nil || !phonenumbers.IsPossibleNumber(n) {
		return "", false
	}
	out := phonenumbers.Format(n, phonenumbers.E164)
	if len(out) < 3 || len(out) > 16 {
		return "", false
	}
	return out, true
}

// Region is the region of an E.164 number ("US" for +1 415…), "" when unknown: the
// region a campaign reads its recipients' national numbers in is its caller id's.
func Region(e164 string) string {
	n, err := phonenumbers.Parse(e164, "ZZ")
	if err != nil {
		return ""
	}
	r := phonenumbers.GetRegionCodeForNumber(n)
	if r == "ZZ" {
		return ""
	}
	return r
}
