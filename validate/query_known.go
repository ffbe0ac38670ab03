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
		_, valueErr := url.QueryUnescape(rawValue)
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
		}
		if seen[name]++; seen[name] == 2 && !repeatable {
			errs.Addf(name, "The %s parameter must be given once.", name)
		}
	}
	return errs.Err()
}
