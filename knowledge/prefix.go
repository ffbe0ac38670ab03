package knowledge

import "strings"

// Truncation matching: a question word the knowledge base does not hold may stand for one
// of the same family the stemmer keeps apart ("pronounce" and "pronunciation", "install"
// and "installation"), found as index terms sharing its first prefixLen letters, at a small
// weight.
var (
	prefixWeight  = 0.0
	prefixLen     = 5
	prefixAllTerm = false // also for question words the knowledge base holds
)

func (ix *Index) prefixMatchesLocked(terms []string) []expansion {
	if prefixWeight <= 0 {
		return nil
	}
	n := float64(ix.live)
	var out []expansion
	for _, t := range terms {
		if len([]rune(t)) < prefixLen || hasDigit(t) {
			continue
		}
		if !prefixAllTerm && ix.liveDF(ix.postings[t]) > 0 {
			continue
		}
		p := string([]rune(t)[:prefixLen])
		for u, ps := range ix.postings {
			if u == t || !strings.HasPrefix(u, p) {
				continue
			}
			if df := ix.liveDF(ps); df > 0 {
				out = append(out, expansion{u, prefixWeight * bm25IDF(n, df)})
			}
		}
	}
	return out
}
