package fulltext

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

// SnippetRunes is about how many characters a snippet holds.
const SnippetRunes = 160

// Snippet finds the first field of c holding one of terms (the transcript in order, then
// analysis, then variables values) and returns its path, up to about SnippetRunes
// characters around the first match (cut at word edges, "…" marking a cut), and the
// spans of every matched word in it. ok is false when no field holds a term (the call
// changed since it was indexed).
func Snippet(c *data.Call, terms []string) (field, text string, spans []data.Span, ok bool) {
	for i, it := range c.Transcript {
		if t, sp, found := snippetOf(it.Content, terms); found {
			return "transcript[" + strconv.Itoa(i) + "].content", t, sp, true
		}
	}
	for _, root := range []struct {
		name string
		m    map[string]any
	}{{"analysis", c.Analysis}, {"variables", c.Variables}} {
		keys := slices.Collect(maps.Keys(root.m))
		sort.Strings(keys)
		for _, k := range keys {
			var t string
			var sp []data.Span
			found := false
			eachValue(root.m[k], func(s string) {
				if !found {
					t, sp, found = snippetOf(s, terms)
				}
			})
			if found {
				return root.name + "." + k, t, sp, true
			}
		}
	}
	return "", "", nil, false
}

// snippetOf cuts s around its first word among terms.
func snippetOf(s string, terms []string) (string, []data.Span, bool) {
	type match struct{ start, end int }
	var ms []match
	Tokens(s, func(t string, start, end int) bool {
		if slices.Contains(terms, t) {
			ms = append(ms, match{start, end})
		}
		return true
	})
	if len(ms) == 0 {
		return "", nil, false
	}
	// A window of SnippetRunes bytes' worth of characters, a third of it before the match.
	from, to := ms[0].start, ms[0].start
	for back := 0; from > 0 && back < SnippetRunes/3; back++ {
		_, n := utf8.DecodeLastRuneInString(s[:from])
		from -= n
	}
	for fwd := 0; to < len(s) && fwd < SnippetRunes-SnippetRunes/3; fwd++ {
		_, n := utf8.DecodeRuneInString(s[to:])
		to += n
	}
	to = max(to, ms[0].end)
	// Cut at spaces so words stay whole.
	if from > 0 {
		if i := strings.IndexByte(s[from:ms[0].start], ' '); i >= 0 {
			from += i + 1
		}
	}
	if to < len(s) {
		if i := strings.LastIndexByte(s[ms[0].end:to], ' '); i >= 0 {
			to = ms[0].end + i
		}
	}
	var b strings.Builder
	prefix := 0
	if from > 0 {
		b.WriteString("…")
		prefix = 1
	}
	b.WriteString(s[from:to])
	if to < len(s) {
		b.WriteString("…")
	}
	var spans []data.Span
	for _, m := range ms {
		if m.start < from || m.end > to {
			continue
		}
		start := prefix + utf8.RuneCountInString(s[from:m.start])
		spans = append(spans, data.Span{Start: start, End: start + utf8.RuneCountInString(s[m.start:m.end])})
	}
	return b.String(), spans, true
}
