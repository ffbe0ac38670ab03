package console

import (
	"fmt"

	"github.com/voiceapi/voiceapi/validate"
)

// formBounds are the validate bounds the console's forms state as maxlength, minlength,
// min and max, by the constant's name: a form reads the bound the API enforces rather
// than repeat its number, so the two cannot drift. A form refuses early only what the API
// would refuse; the API stays the judge (maxlength counts UTF-16 units, not characters).
var formBounds = map[string]int{
	"MaxNameLen":            validate.MaxNameLen,
	"MaxAgentName":          validate.MaxAgentName,
	"MaxPublishDescription": validate.MaxPublishDescription,
	"MinPasswordLen":        validate.MinPasswordLen,
	"MaxCampaignConcurrent": validate.MaxCampaignConcurrent,
	"MaxCampaignAttempts":   validate.MaxCampaignAttempts,
	"MaxBackoffMinutes":     validate.MaxBackoffMinutes,
	"MaxRolloutMinCalls":    validate.MaxRolloutMinCalls,
	"MinChunksToRetrieve":   validate.MinChunksToRetrieve,
	"MaxChunksToRetrieve":   validate.MaxChunksToRetrieve,
}

// formBound returns the bound named name; an unknown name fails the page's rendering.
func formBound(name string) (int, error) {
	n, ok := formBounds[name]
	if !ok {
		return 0, fmt.Errorf("console: no form bound named %q (add it to formBounds)", name)
	}
	return n, nil
}
