package validate

import (
	"net/url"
	"strings"
)

// KnownQuery checks a raw query string against the parameters a route declares
// (declared: each name, true when the declaration is an array and so may be repeated).
// A name not declared is a fault on that name (conventions §1: a typo such as agnet_id
// would otherwise widen a list silently); a scalar given twice is a fault too, since
// which of the two counts would be a guess; and a pair that cannot be decoded (a bad
// percent escape, a semicolon) is a fault on its raw name rather than dropped unseen, as
// url.ParseQuery would.
func KnownQuery(raw string, declared map[string]bool) error {
	var errs Errors
	seen := map[string]int{}
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, nameErr := url.QueryUnescape(rawName)
		repeatable, known := declared[name]
		value, valueErr := url.QueryUnescape(rawValue)
		switch {
		case nameErr != nil || strings.Contains(rawName, ";"):
			if !errs.Has(rawName) {
				errs.Addf(rawName, "The %s parameter is not correctly encoded.", rawName)
			}
			continue
		case errs.Has(name):
			continue // one message a name is enough
		case name == "":
			errs.Add(name, "A query parameter has no name.")
			continue
		case !known:
			errs.Addf(name, "The %s parameter is not a known parameter.", name)
			continue
		case valueErr != nil || strings.Contains(rawValue, ";"):
			errs.Addf(name, "The %s parameter's value is not correctly encoded: escape ; and %% as %%3B and %%25.", name)
			continue
		case strings.IndexByte(value, 0) >= 0:
			// As in a body (strictjson): PostgreSQL cannot compare text holding it.
			errs.Addf(name, "The %s parameter must not contain U+0000 (a NUL character).", name)
			continue
		}
		if seen[name]++; seen[name] == 2 && !repeatable {
			errs.Addf(name, "The %s parameter must be given once.", name)
		}
	}
	return errs.Err()
}

// QueryHoldsNUL reports whether a parameter of the raw query, name or value, holds
// U+0000 (%00). Such a query is refused before any handler reads it: a list that reads
// its page before naming its query's faults would hand the text to PostgreSQL, which
// fails on it.
func QueryHoldsNUL(raw string) bool {
	if !strings.Contains(raw, "%00") {
		return false // the only way a query can carry the character
	}
	for pair := range strings.SplitSeq(raw, "&") {
		name, value, _ := strings.Cut(pair, "=")
		for _, s := range []string{name, value} {
			if u, err := url.QueryUnescape(s); err == nil && strings.IndexByte(u, 0) >= 0 {
				return true
			}
		}
	}
	return false
}
