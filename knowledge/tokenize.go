package knowledge

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/french"
	"github.com/kljensen/snowball/spanish"
)

// language is the language a text is analyzed in: it picks the stop words and the stemmer.
type language uint8

// The languages with a stemmer. English is the default: a text with no evidence of another
// language (too short, or words no list knows) is analyzed as English.
const (
	english_ language = iota
	spanish_
	french_
	numLanguages
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
		get got let us didnt wasnt werent hasnt havent hadnt shouldnt wouldnt couldnt mustnt neednt shant aint`) {
		m[w] = true
	}
	return m
}()

// questionWords are the interrogatives of Spanish and French that their Snowball stop word
// lists lack (Spanish lists "como" and "donde" but not "cómo" and "dónde"): like "how" and
// "where" in English, they are in almost every question and carry none of its subject.
var questionWords = [numLanguages]map[string]bool{
	spanish_: setOf("cómo dónde cuándo cuál cuáles quién quiénes cuánto cuánta cuántos cuántas adónde"),
	french_:  setOf("comment pourquoi quand où quel quelle quels quelles combien lequel laquelle lesquels lesquelles"),
}

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// isStop reports whether w is a stop word of l.
func isStop(l language, w string) bool {
	switch l {
	case spanish_:
		return spanish.IsStopWord(w) || questionWords[l][w]
	case french_:
		return french.IsStopWord(w) || questionWords[l][w]
	}
	return stopWords[w]
}

// detectLanguage picks the language whose stop words the text uses most; English unless
// another scores at least two and more than English. A word that is a stop word of several
// languages ("de", "la") counts for each a share. Stop words are a reliable signal even in a
// short question ("¿dónde está la oficina?" has three Spanish ones).
func detectLanguage(words []string) language {
	var score [numLanguages]float64
	var in [numLanguages]bool
	for _, w := range words {
		n := 0
		for l := range numLanguages {
			in[l] = isStop(l, w)
			if in[l] {
				n++
			}
		}
		for l := range numLanguages {
			if in[l] {
				score[l] += 1 / float64(n)
			}
		}
	}
	best := english_
	for l := spanish_; l < numLanguages; l++ {
		if score[l] >= 2 && score[l] > score[best] {
			best = l
		}
	}
	return best
}

// analyze returns the index terms of text in its detected language, and that language.
func analyze(text string) ([]string, language) {
	words := splitWords(text)
	l := detectLanguage(words)
	return termsOf(words, l), l
}

// analyzeAs returns the index terms of text analyzed in language l.
func analyzeAs(text string, l language) []string { return termsOf(splitWords(text), l) }

// termsOf drops stop words and one-letter words from words and stems the rest in l. Digits
// are kept: "30 days" and "plan 2" matter. words is reused for the result.
func termsOf(words []string, l language) []string {
	out := words[:0]
	for _, w := range words {
		if len(w) == 1 && !(w[0] >= '0' && w[0] <= '9') || isStop(l, w) {
			continue
		}
		out = append(out, stem(l, w))
	}
	return out
}

// splitWords lowercases text and returns its words: runs of letters and digits. An
// apostrophe inside a word (' or ’) is read the way the languages use it: a French elision
// is dropped with its article or pronoun ("l'adresse" is "adresse", "qu'il" is "il"), an
// English clitic is dropped ("Go's" is "go", "you're" is "you", "what's" is "what"), and
// any other apostrophe joins the word ("don't" is "dont", "O'Brien" is "obrien"). It is
// the hot path of indexing, so a word that is already lowercase ASCII is sliced from the
// text rather than copied.
func splitWords(text string) []string {
	words := make([]string, 0, len(text)/6)
	var buf []byte
	for i := 0; i < len(text); {
		r, w := decodeRune(text, i)
		if !isWordRune(r) {
			i += w
			continue
		}
		start, simple := i, true
		buf = buf[:0]
	word:
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
				next, _ := decodeRune(text, i+w)
				if i+w >= len(text) || !unicode.IsLetter(next) {
					break word
				}
				if simple {
					simple, buf = false, append(buf, text[start:i]...)
				}
				if elisions[string(buf)] {
					buf = buf[:0] // "l'adresse": the word starts after the apostrophe
					i += w
					continue
				}
				if n := cliticLen(text[i+w:]); n > 0 {
					i += w + n // "Go's": the word ends at the apostrophe
					break word
				}
				i += w // inside a word: "don't" → "dont"
				continue
			}
			break
		}
		switch {
		case simple:
			words = append(words, text[start:i])
		case len(buf) > 0:
			words = append(words, string(buf))
		}
	}
	return words
}

// elisions are the French words that elide their vowel before another ("l'", "qu'"),
// lowercased: the word that matters is the one after the apostrophe.
var elisions = map[string]bool{"c": true, "d": true, "j": true, "l": true, "m": true, "n": true, "s": true, "t": true,
	"qu": true, "jusqu": true, "lorsqu": true, "puisqu": true, "quoiqu": true}

// cliticLen returns the length of the English clitic ("s", "re", "ve", "ll", "d", "m", in
// either case) that s starts with when the word ends there, else 0.
func cliticLen(s string) int {
	n := 0
	for n < len(s) && n < 3 && (s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z') {
		n++
	}
	if n == 0 || n == 3 {
		return 0
	}
	if next, _ := decodeRune(s, n); n < len(s) && isWordRune(next) {
		return 0
	}
	switch strings.ToLower(s[:n]) {
	case "s", "re", "ve", "ll", "d", "m":
		return n
	}
	return 0
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

// stemCache remembers stems: words follow Zipf's law, so a few thousand entries answer
// most lookups, and the Snowball stemmers allocate. It stops growing at maxStemCache words
// per language, which bounds its memory (a few MB) whatever is indexed.
var stemCache [numLanguages]sync.Map

const maxStemCache = 100_000

var stemCacheLen [numLanguages]struct {
	sync.Mutex
	n int
}

// stem reduces a word to its stem with the Snowball stemmer of l ("refunds", "refunded",
// "refunding" → "refund"; "contraseñas" → "contraseñ"). Words with digits are kept as they
// are. Index and query use the same function, so only consistency matters.
func stem(l language, w string) string {
	if len(w) <= 3 || hasDigit(w) {
		return w
	}
	if s, ok := stemCache[l].Load(w); ok {
		return s.(string)
	}
	var s string
	switch l {
	case spanish_:
		s = spanish.Stem(w, true)
	case french_:
		s = french.Stem(w, true)
	default:
		s = english.Stem(w, true)
	}
	c := &stemCacheLen[l]
	c.Lock()
	if c.n < maxStemCache {
		c.n++
		c.Unlock()
		stemCache[l].Store(strings.Clone(w), s)
	} else {
		c.Unlock()
	}
	return s
}

func hasDigit(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= '0' && w[i] <= '9' {
			return true
		}
	}
	return false
}

// queryTerms analyzes a query in its own language when its words show one, else in the
// language most of the index is in: "GOMAXPROCS" alone says nothing, and a Spanish
// knowledge base should stem it as Spanish. It returns the terms and that language.
func (ix *Index) queryTerms(query string) ([]string, language) {
	words := splitWords(query)
	l := detectLanguage(words)
	if l == english_ && !hasStopWord(words, english_) {
		for m := range numLanguages {
			if ix.langs[m] > ix.langs[l] {
				l = m
			}
		}
	}
	return termsOf(words, l), l
}

func hasStopWord(words []string, l language) bool {
	for _, w := range words {
		if isStop(l, w) {
			return true
		}
	}
	return false
}
