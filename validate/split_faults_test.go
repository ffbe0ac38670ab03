package validate

import (
	"errors"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// TestSplitFaults parts a 422's faults at exactly the given paths from the others (a
// path under one given stays with the others), and passes any other error through.
func TestSplitFaults(t *testing.T) {
	var errs Errors
	errs.Add("variants", "sum")
	errs.Add("variants.1.version", "none")
	errs.Add("rollback.metric", "bad")
	at, rest := SplitFaults(errs.Err(), "variants")
	expectPaths(t, "at", at, "variants")
	expectPaths(t, "rest", rest, "variants.1.version", "rollback.metric")
	if at, rest := SplitFaults(errs.Err(), "nowhere"); at != nil || rest == nil {
		t.Errorf("no path given matched: at %v, rest %v", at, rest)
	}
	other := errors.New("storage")
	if at, rest := SplitFaults(other, "variants"); at != nil || rest != other {
		t.Errorf("another error: at %v, rest %v", at, rest)
	}
	if at, rest := SplitFaults(data.NotFound("Agent"), "variants"); at != nil || data.ErrorCode(rest) != data.ENOTFOUND {
		t.Errorf("not found: at %v, rest %v", at, rest)
	}
}
