package validate

import (
	"maps"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// MaxPlanLen bounds a plan name.
const MaxPlanLen = 100

// MaxOpenConversations bounds a workspace's open conversations, whether a plan's
// open_conversations limit or the server's --max-open-conversations sets it: a start
// counts them in its write transaction (bbolt's only writer), up to the bound.
const MaxOpenConversations = 10_000

// SubscriptionSet checks a change of a workspace's plan (the operator's CLI): a plan name
// not blank and at most MaxPlanLen characters, known limits, each -1 (unlimited) or at
// least 0; open_conversations at most MaxOpenConversations.
func SubscriptionSet(in data.SubscriptionSet) error {
	var errs Errors
	if in.Plan != nil {
		errs.NotBlank("plan", *in.Plan)
		errs.MaxLen("plan", *in.Plan, MaxPlanLen)
	}
	for _, name := range slices.Sorted(maps.Keys(in.Limits)) {
		if !slices.Contains(data.LimitNames, name) {
			errs.Addf(name, "The %s limit is unknown; limits are %s.", name, strings.Join(data.LimitNames, ", "))
		} else if name == data.LimitOpenConversations {
			// -1 takes the plan's limit away, which leaves the server's bound, not none.
			if v := in.Limits[name]; v < -1 || v > MaxOpenConversations {
				errs.Addf(name, "The %s limit must be -1 (the server's bound) or 0 to %d.", name, MaxOpenConversations)
			}
		} else if in.Limits[name] < -1 {
			errs.Addf(name, "The %s limit must be -1 (unlimited) or at least 0.", name)
		}
	}
	return errs.Err()
}
