package redact

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"strings"
)

// patternProblems word each way Go's RE2 parser refuses a pattern for the person who
// wrote it: its own text ("error parsing regexp: missing closing ): `(a`") is for
// programmers.
var patternProblems = map[syntax.ErrorCode]string{
	syntax.ErrMissingParen:          "a ( has no closing )",
	syntax.ErrUnexpectedParen:       "a ) closes no (",
	syntax.ErrMissingBracket:        "a [ has no closing ]",
	syntax.ErrInvalidCharClass:      "a character class in [ ] is not one RE2 knows",
	syntax.ErrInvalidCharRange:      "a range in [ ] runs backwards or is not a range",
	syntax.ErrInvalidEscape:         "a backslash escape is not one RE2 knows",
	syntax.ErrTrailingBackslash:     "it ends with a lone backslash",
	syntax.ErrMissingRepeatArgument: "a *, + or ? repeats nothing",
	syntax.ErrInvalidRepeatOp:       "two repetitions (such as ** or +*) follow each other",
	syntax.ErrInvalidRepeatSize:     "a {n,m} repetition is out of order or over 1000",
	syntax.ErrInvalidNamedCapture:   "a named group (?P<name>…) has an invalid or repeated name",
	syntax.ErrInvalidPerlOp:         "a (?…) group is not one RE2 supports (lookarounds such as (?= and (?! are not)",
	syntax.ErrInvalidUTF8:           "it is not valid UTF-8",
	syntax.ErrNestingDepth:          "it nests groups or repetitions too deeply",
	syntax.ErrLarge:                 "it is too large once its repetitions are expanded",
}

// PatternProblem says in words what is wrong with pattern, which Go's RE2 parser refused
// with err: what ("a ( has no closing )") and, when it is not the whole pattern, where.
// Every refused pattern of the API (a redaction rule's, a test's) is told with it.
func PatternProblem(pattern string, err error) string {
	what := "it is not one RE2 reads"
	var se *syntax.Error
	if errors.As(err, &se) {
		if w, ok := patternProblems[se.Code]; ok {
			what = w
		}
		if se.Expr != "" && se.Expr != pattern {
			// As written, not Go-quoted: a backslash the writer typed once reads once.
			what += fmt.Sprintf(", at \"%s\"", strings.ToValidUTF8(se.Expr, "\uFFFD"))
		}
	}
	return what
}
