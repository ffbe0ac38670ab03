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
	// A message may name another field than its own ("Closes at must be after
	// window.start (18:00)"): a labelled path the errors do not hold is its label too,
	// when it stands as a whole path (not "user.script" inside "user.script.0").
	var others []string
	for p := range labels {
		if _, own := e.Errors[p]; !own && !strings.Contains(p, "#") && strings.ContainsAny(p, "._") {
			others = append(others, p)
		}
	}
	sort.Slice(others, func(i, j int) bool { return len(others[i]) > len(others[j]) })
	mentions := func(msg string) string {
		for _, p := range others {
			msg = replacePath(msg, p, "“"+labels[p]+"”")
		}
		return msg
	}
	for p, msgs := range e.Errors {
		for _, m := range msgs {
			out.Errors[p] = append(out.Errors[p], mentions(rewrite(m)))
		}
	}
	out.Message = mentions(rewrite(e.Message))
	return &out
}

// replacePath replaces each occurrence of path in msg that is not part of a longer path
// or word.
func replacePath(msg, path, with string) string {
	part := func(c byte) bool {
		return c == '.' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	var b strings.Builder
	for {
		i := strings.Index(msg, path)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		end := i + len(path)
		// A sentence's full stop after the path ends it; a dot followed by more of a path does not.
		after := end < len(msg) && part(msg[end]) && !(msg[end] == '.' && (end+1 == len(msg) || !part(msg[end+1])))
		if (i > 0 && part(msg[i-1])) || after {
			b.WriteString(msg[:end])
		} else {
			b.WriteString(msg[:i] + with)
		}
		msg = msg[end:]
	}
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
	return e.messagesWhere(func(string) bool { return true })
}

// messagesWhere lists the messages of the paths keep takes, in path order.
func (e *apiError) messagesWhere(keep func(path string) bool) []string {
	paths := make([]string, 0, len(e.Errors))
	for p := range e.Errors {
		if keep(p) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var out []string
	for _, p := range paths {
		out = append(out, e.Errors[p]...)
	}
	return out
}
