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
// It reports false for a number that cannot be read, or whose length no number of its
// country has.
func Normalize(raw, region string) (string, bool) {
	s := strings.TrimSpace(raw)
	if s == "" || len(s) > 64 {
		return "", false
	}
	if region == "" {
		region = "ZZ" // unknown: only "+..." and "00..." numbers parse
	}
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
