package knowledge

import (
	"strings"
	"unicode"
	"unicode/utf8"
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
// It is the hot path of indexing, so a word that is already lowercase ASCII is sliced from
// the text rather than copied.
func tokenize(text string) []string {
	terms := make([]string, 0, len(text)/8)
	var buf []byte
	for i := 0; i < len(text); {
		r, w := decodeRune(text, i)
		if !isWordRune(r) {
			i += w
			continue
		}
		start, simple := i, true
		buf = buf[:0]
		for i < len(text) {
			r, w = decodeRune(text, i)
			switch {
			case isWordRune(r):
				if simple && !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
					simple, buf = false, append(buf, text[start:i]...)
				}
				if !simple {
					buf = utf8.AppendRune(buf, unicode.ToLower(r))
				}
				i += w
				continue
			case r == '\'' || r == '’':
				if next, _ := decodeRune(text, i+w); i+w < len(text) && unicode.IsLetter(next) {
					if simple {
						simple, buf = false, append(buf, text[start:i]...)
					}
					i += w // inside a word: "don't" → "dont"
					continue
				}
			}
			break
		}
		word := text[start:i]
		if !simple {
			word = string(buf)
		}
		if len(word) == 1 && !(word[0] >= '0' && word[0] <= '9') || stopWords[word] {
			continue
		}
		terms = append(terms, stem(word))
	}
	return terms
}

func decodeRune(s string, i int) (rune, int) {
	if i >= len(s) {
		return utf8.RuneError, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
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
