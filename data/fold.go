package data

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// FoldCase is the one case fold of the name searches (an agent's name, a number's
// nickname): a search keeps a record whose folded text contains the folded query. Both
// engines fold with it, bbolt as it reads and PostgreSQL into a column written beside
// the text (migrations 0040, 0041), because lower() there folds by the database's
// locale, only ASCII under the C locale. Changing it changes what PostgreSQL has stored:
// a new fold needs a migration that folds the stored rows again (0041 did, for this one).
//
// Each letter is lowered from its capital, not lowered alone: the letters that share a
// capital fold alike, a word's final sigma (ς) as σ, the long s (ſ) as s, the Kelvin
// sign as k, where strings.ToLower kept them apart and "ΜΥΘΟΣ" missed "μυθος". One
// letter folds to one letter: ß stays ß (not "ss"), as its fold to two would not.
func FoldCase(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, s)
		}
	}
	return strings.ToLower(s) // ASCII: the same fold, without a rune's two table lookups
}
