package knowledge

import (
	"strings"
	"unicode"
)

// stopWords are English function words, question words included: they appear in almost every
// question ("how do I…", "what is your…") and would otherwise dilute the score of the words
// that carry the meaning.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be
		because been before being below between both but by can could did do does doing down during
		each few for from further had has have having he her here hers herself him himself his how i
		if in into is it its itself just me more most my myself no nor not now of off on once only or
		other our ours ourselves out over own same she should so some such than that the their theirs
		them themselves then there these they this those through to too under until up very was we
		were what when where which while who whom why will with would you your yours yourself
		yourselves im ive id youre dont doesnt cant wont isnt arent please also may might must shall
		get got let us`) {
		m[w] = true
	}
	return m
}()

// tokenize lowercases text and returns its index terms: runs of letters and digits (an
// apostrophe inside a word is dropped, so "customer's" is one word), without stop words or
// one-letter words, each reduced by stem. Digits are kept: "30 days" and "plan 2" matter.
func tokenize(text string) []string {
	var terms []string
	var word []rune
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := string(word)
		word = word[:0]
		if len([]rune(w)) < 2 && !unicode.IsDigit([]rune(w)[0]) {
			return
		}
		if stopWords[w] {
			return
		}
		terms = append(terms, stem(w))
	}
	rs := []rune(text)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word = append(word, unicode.ToLower(r))
		case (r == '\'' || r == '’') && len(word) > 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]):
			// inside a word: "don't" → "dont"
		default:
			flush()
		}
	}
	flush()
	return terms
}

// stem is a deliberately light English stemmer: it folds plurals and the -ing and -ed
// forms onto one term ("refunds", "refunded", "refunding" → "refund"), and drops a final "e"
// so that "charge" and "charged" meet at "charg". It never produces a term shorter than three
// letters, which keeps short words intact. Both the index and the query use it, so only
// consistency matters, not linguistic accuracy.
func stem(w string) string {
	if len(w) <= 3 || !isASCIILetters(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ing", "ed"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			w = w[:len(w)-len(suf)]
			// "shipping" → "shipp" → "ship", but "billing" keeps "bill".
			if n := len(w); n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) && !isVowel(w[n-1]) {
				w = w[:n-1]
			}
			break
		}
	}
	if strings.HasSuffix(w, "e") && len(w) > 3 {
		w = w[:len(w)-1]
	}
	return w
}

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}
