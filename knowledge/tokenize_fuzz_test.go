package knowledge

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzSplitWords checks the tokenizer index and query share, on any text, invalid UTF-8
// included: every word is non-empty valid UTF-8 of letters and digits only, each rune
// already lowercase; words joined by spaces split into the same words (the tokenizer is
// idempotent, so a query made of index terms finds them); and analyzed terms, in every
// language, are non-empty valid UTF-8, no more than the words.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{
		"How do I get my REFUNDS? Shipping, shipped & ship! Customer's policies 30 days. Café",
		"Go's what's you're we'll they've I'm I'd GO'S don't isn't",
		"O'Brien rock'n'roll o'clock l'adresse d'identité qu'il jusqu'à L’Adresse",
		"users' guide 'quoted' l' x's", "\xff\xfe l'\xff x'\xc3", "İSTANBUL ǅungla ΣΑΣ ß ﬁ",
		"contraseñas Über 2fa ½ ١٢٣", "'''", "a'b'c'd", "qu'qu'l'l'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		words := splitWords(text)
		for _, w := range words {
			if w == "" || !utf8.ValidString(w) {
				t.Fatalf("splitWords(%q) gave the word %q", text, w)
			}
			for _, r := range w {
				if !isWordRune(r) || unicode.ToLower(r) != r {
					t.Fatalf("splitWords(%q) gave %q, with %q neither a lowercase letter nor a digit", text, w, r)
				}
			}
		}
		if again := splitWords(strings.Join(words, " ")); !slices.Equal(again, words) {
			t.Fatalf("splitWords(%q) = %q, which split again gives %q", text, words, again)
		}
		for l := range numLanguages {
			terms := analyzeAs(text, l)
			if len(terms) > len(words) {
				t.Fatalf("analyzeAs(%q, %d) = %q, more terms than words %q", text, l, terms, words)
			}
			for _, term := range terms {
				if term == "" || !utf8.ValidString(term) {
					t.Fatalf("analyzeAs(%q, %d) gave the term %q", text, l, term)
				}
			}
		}
	})
}
