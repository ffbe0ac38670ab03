package data

import "strings"

// FoldCase is the one case fold of the name searches (an agent's name, a number's
// nickname): a search keeps a record whose folded text contains the folded query. Both
// engines fold with it, bbolt as it reads and PostgreSQL into a column written beside
// the text (migration 0040), because lower() there folds by the database's locale, only
// ASCII under the C locale. Changing it changes what PostgreSQL has stored: a new fold
// needs a migration that folds the stored rows again.
func FoldCase(s string) string { return strings.ToLower(s) }
