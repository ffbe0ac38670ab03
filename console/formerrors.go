package console

import (
	"sort"
	"strconv"
	"strings"
)

// fieldLabels are a form's labels by the API's dot path. A key may hold "#" for an
// array index ("privacy.redaction.rules.#.pattern"); its label may hold "#" too, which
// becomes the item's number counted from 1 ("Rule # pattern" → "Rule 3 pattern").
type fieldLabels map[string]string

// relabel returns e with its messages naming the form's labels instead of the API's
// paths (docs/dashboard.md, "Shared patterns"): "The phone_number field must be a valid
// E.164 number." becomes "Phone number must be a valid E.164 number.", which is what the
// person filling the form can find on it. Paths without a label stay as they are.
func relabel(e *apiError, labels fieldLabels) *apiError {
	if e == nil || len(e.Errors) == 0 {
		return e
	}
	out := *e
	out.Errors = map[string][]string{}
	paths := make([]string, 0, len(e.Errors))
	for p := range e.Errors {
		paths = append(paths, p)
	}
	// Longer paths first, so that "rules.1" does not rewrite the start of "rules.12".
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	rewrite := func(msg string) string {
		for _, p := range paths {
			if l := labels.of(p); l != "" {
				msg = strings.ReplaceAll(msg, "The "+p+" field", l)
				msg = strings.ReplaceAll(msg, "The "+p+" ", l+" ")
				if strings.ContainsAny(p, "._") { // a bare word ("name") may be any word
					msg = strings.ReplaceAll(msg, p, "“"+l+"”")
				}
			}
		}
		return msg
	}
	for p, msgs := range e.Errors {
		for _, m := range msgs {
			out.Errors[p] = append(out.Errors[p], rewrite(m))
		}
	}
	out.Message = rewrite(e.Message)
	return &out
}

// of returns the label of path: an exact key, or a key with "#" for each index.
func (l fieldLabels) of(path string) string {
	if s, ok := l[path]; ok {
		return s
	}
	parts := strings.Split(path, ".")
	n := -1
	for i, p := range parts {
		if k, err := strconv.Atoi(p); err == nil {
			parts[i], n = "#", k
		}
	}
	if n < 0 {
		return ""
	}
	s, ok := l[strings.Join(parts, ".")]
	if !ok {
		return ""
	}
	return strings.ReplaceAll(s, "#", strconv.Itoa(n+1))
}

// Messages lists every message of e, each once, in path order: a form's summary.
func (e *apiError) Messages() []string {
	if e == nil {
		return nil
	}
	if len(e.Errors) == 0 {
		return []string{e.Message}
	}
	paths := make([]string, 0, len(e.Errors))
	for p := range e.Errors {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		out = append(out, e.Errors[p]...)
	}
	return out
}
