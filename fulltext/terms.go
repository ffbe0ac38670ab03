// Package fulltext turns call text into index terms and builds the snippets of search
// hits. It is pure: the service computes a call's terms and hands them to storage, which
// keeps the postings, so every storage engine indexes the same words.
package fulltext

import (
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

const (
	// MaxTermRunes bounds a term: a longer word is cut to its first MaxTermRunes letters
	// and digits, in the index and in queries alike, so it is still found.
	MaxTermRunes = 32
	// MaxCallTerms bounds the distinct terms indexed for one call (the first ones met in
	// transcript order, then analysis, then variables): it bounds the postings one call
	// write adds. A transcript at its size limit holds far fewer distinct words in practice.
	MaxCallTerms = 4096
	// MaxTermFrequency caps the occurrences of a term counted in one call.
	MaxTermFrequency = 255
)

// Tokens calls fn with each word of s: a maximal run of Unicode letters and digits,
// lowercased and cut to MaxTermRunes, with its byte offsets [start, end) in s.
func Tokens(s string, fn func(term string, start, end int) bool) {
	start := -1
	for i, r := range s {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			if !fn(normalize(s[start:i]), start, i) {
				return
			}
			start = -1
		}
	}
	if start >= 0 {
		fn(normalize(s[start:]), start, len(s))
	}
}

func normalize(w string) string {
	w = strings.ToLower(w)
	if utf8.RuneCountInString(w) <= MaxTermRunes {
		return w
	}
	n := 0
	for i := range w {
		if n == MaxTermRunes {
			return w[:i]
		}
		n++
	}
	return w
}

// QueryTerms returns the distinct terms of a query, in the order they first appear.
func QueryTerms(q string) []string {
	var out []string
	Tokens(q, func(t string, _, _ int) bool {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
		return true
	})
	return out
}

// CallTerms returns the terms of a call with their frequencies (capped at
// MaxTermFrequency): the words of its transcript contents and of the values (not the
// keys) of its analysis and variables, strings and numbers alike, at any depth.
//
// What it returns for a stored call must not change between versions without a reindex:
// the service removes a call's postings by the terms this gives for the call as stored
// (service.CallSearchTx), and a term it no longer gives would leave its posting behind.
func CallTerms(c *data.Call) map[string]int {
	terms := map[string]int{}
	add := func(s string) {
		Tokens(s, func(t string, _, _ int) bool {
			n, ok := terms[t]
			if !ok && len(terms) == MaxCallTerms {
				return true // a new term past the bound: skipped; known ones still count
			}
			if n < MaxTermFrequency {
				terms[t] = n + 1
			}
			return true
		})
	}
	for _, it := range c.Transcript {
		add(it.Content)
	}
	eachValue(c.Analysis, add)
	eachValue(c.Variables, add)
	return terms
}

// eachValue calls fn with every string or number inside v, objects in key order.
func eachValue(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case float64:
		fn(strconv.FormatFloat(x, 'f', -1, 64))
	case json.Number:
		fn(x.String())
	case int:
		fn(strconv.Itoa(x))
	case int64:
		fn(strconv.FormatInt(x, 10))
	case []any:
		for _, e := range x {
			eachValue(e, fn)
		}
	case map[string]any:
		keys := slices.Collect(maps.Keys(x))
		sort.Strings(keys)
		for _, k := range keys {
			eachValue(x[k], fn)
		}
	}
}
