package console

import (
	"fmt"
	"html"
	"html/template"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/validate"
)

// formBounds are the validate bounds the console's forms state as numbers (min, max, a
// hint's words, maxlength of a bound in bytes), by the constant's name: a form reads the
// bound the API enforces rather than repeat its number, so the two cannot drift. A form
// refuses early only what the API would refuse; the API stays the judge.
var formBounds = map[string]int{
	"MaxRedactionPatternBytes": validate.MaxRedactionPatternBytes,
	"MaxCampaignConcurrent":    validate.MaxCampaignConcurrent,
	"MaxCampaignAttempts":      validate.MaxCampaignAttempts,
	"MaxBackoffMinutes":        validate.MaxBackoffMinutes,
	"MaxRolloutMinCalls":       validate.MaxRolloutMinCalls,
	"MinChunksToRetrieve":      validate.MinChunksToRetrieve,
	"MaxChunksToRetrieve":      validate.MaxChunksToRetrieve,
	"MinVectorShare":           validate.MinVectorShare, // whole numbers: a compile error says when they stop being
	"MaxVectorShare":           validate.MaxVectorShare,
	"MinTestMaxTurns":          validate.MinTestMaxTurns,
	"MaxTestMaxTurns":          validate.MaxTestMaxTurns,
	"MinTestRepeat":            validate.MinTestRepeat,
	"MaxTestRepeat":            validate.MaxTestRepeat,
	"MinMockStatus":            validate.MinMockStatus,
	"MaxMockStatus":            validate.MaxMockStatus,
}

// textBounds are the validate bounds of text in characters (runes, as validate counts
// them), stated with textRule as a pattern, never as maxlength or minlength: those count
// UTF-16 code units, so an emoji counts two and a name of 128 emoji could not be typed
// though the API takes 255 characters. A bound in bytes may be maxlength (bound
// "Max…Bytes"): a string never has more UTF-16 units than UTF-8 bytes, so the browser
// never refuses what the API accepts.
var textBounds = map[string]int{
	"MaxNameLen":            validate.MaxNameLen,
	"MaxAgentName":          validate.MaxAgentName,
	"MaxPublishDescription": validate.MaxPublishDescription,
	"MaxDescriptionLen":     validate.MaxDescriptionLen,
	"MaxSourceTitle":        validate.MaxSourceTitle,
	"MaxURL":                validate.MaxURL,
	"MaxWebhookURLLen":      validate.MaxWebhookURLLen,
	"MaxQuery":              validate.MaxQuery,
	"MaxCampaignName":       validate.MaxCampaignName,
	"MaxSuppressionReason":  validate.MaxSuppressionReason,
	"MaxNicknameLen":        validate.MaxNicknameLen,
	"MaxTestName":           validate.MaxTestName,
	"MinPasswordLen":        validate.MinPasswordLen,
}

// formBound returns the bound named name, of either table; an unknown name fails the
// page's rendering.
func formBound(name string) (int, error) {
	if n, ok := formBounds[name]; ok {
		return n, nil
	}
	if n, ok := textBounds[name]; ok {
		return n, nil
	}
	return 0, fmt.Errorf("console: no form bound named %q (add it to formBounds or textBounds)", name)
}

// anyChar is one code point, newlines included: HTML compiles a pattern with the v flag,
// under which a class matches whole code points, as utf8.RuneCountInString counts them
// ("." would miss U+2028, which a text field keeps).
const anyChar = `[\s\S]`

// textShapes are the shapes of text the API checks beyond its length, stated as a pattern
// and its title; TestTextShapesAgreeWithValidate holds each to validate's rule.
var textShapes = map[string]func() (pattern, title string){
	// A rule's name is its marker (redact.NamePattern).
	"RedactionRuleName": func() (string, string) {
		rest := validate.MaxRedactionRuleName - 1
		return "[a-z][a-z0-9_]{0," + strconv.Itoa(rest) + "}",
			fmt.Sprintf("A lower-case letter, then up to %d lower-case letters, digits or underscores", rest)
	},
}

// textRule returns the pattern and title attributes that state the rule named name on a
// text field: a bound "Max…" (at most that many characters), "Min…" (at least), or a shape
// of textShapes. A pattern works without script, and the browser shows its title when it
// refuses the field; patterns.js words the refusal after the title, with the count of
// characters where the rule is a bound (data-chars).
func textRule(name string) (template.HTMLAttr, error) {
	pattern, title, err := textPattern(name)
	if err != nil {
		return "", err
	}
	attrs := `pattern="` + html.EscapeString(pattern) + `" title="` + html.EscapeString(title) + `"`
	if _, shape := textShapes[name]; !shape {
		attrs += " data-chars"
	}
	return template.HTMLAttr(attrs), nil
}

// textPattern returns the pattern (as HTML's pattern attribute takes it: without anchors)
// and the title of the rule named name.
func textPattern(name string) (pattern, title string, err error) {
	if shape, ok := textShapes[name]; ok {
		pattern, title = shape()
		return pattern, title, nil
	}
	n, ok := textBounds[name]
	switch {
	case !ok:
		return "", "", fmt.Errorf("console: no text bound or shape named %q (add it to textBounds or textShapes)", name)
	case strings.HasPrefix(name, "Max"):
		return anyChar + "{0," + strconv.Itoa(n) + "}", fmt.Sprintf("At most %d characters", n), nil
	case strings.HasPrefix(name, "Min"):
		return anyChar + "{" + strconv.Itoa(n) + ",}", fmt.Sprintf("At least %d characters", n), nil
	}
	return "", "", fmt.Errorf("console: the bound %q is neither a Max nor a Min", name)
}
