package validate

import (
	"regexp"

	"github.com/voiceapi/voiceapi/redact"
)

// regexpPattern faults path when s is not an RE2 regular expression, saying in words
// what is wrong and where (redact.PatternProblem, as a redaction rule's pattern is told).
func regexpPattern(errs *Errors, path, s string) {
	if _, err := regexp.Compile(s); err != nil {
		errs.Addf(path, "The %s field is not a valid regular expression: %s.", path, redact.PatternProblem(s, err))
	}
}
