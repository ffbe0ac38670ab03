package redact

// The digit detectors (card, SSN, phone) do not see characters: they see runs of digit
// tokens. A token is a maximal group of ASCII digits ("4111"), a spoken digit ("four", "oh")
// or a repeated spoken digit ("double five"). Tokens join into a run when only a short
// separator stands between them (spaces, a dash, a dot, ", ", parentheses); any other
// character ends the run. A detector then tries windows of consecutive tokens of a run.
//
// Everything a window's validity depends on is inside the window or recorded on its first
// token from text before the run (a label word, a cue word, whether it starts the run).
// Redacting a match replaces digits by a bracketed marker, which ends runs and is skipped
// by the word trackers, so a second pass over the output mostly sees the same windows and
// the same context; Apply's rounds (redact.go) catch the rest.

type sepKind uint8

const (
	sepNone  sepKind = iota // first token of a run
	sepSpace                // white space only
	sepDash                 // "-" with optional spaces around
	sepDot                  // "." with no spaces
	sepComma                // ", " (spoken digits)
	sepParen                // ") " or " (" (phone area codes)
)

type token struct {
	start, end int // bytes of the text covered, the prefix excluded
	pre        int // start including a "+", "plus " or "(" prefix
	d0, d1     int // the token's digits in tokens.digits
	sep        sepKind
	word       bool // spoken ("four", "double five")
	glued      bool // ASCII digits touching a letter ("A123", "5pm")
	plus       bool // preceded by "+" or the word "plus"
	paren      bool // preceded by "("
	afterLabel bool // the word before is a label such as "order" (phone numbers)
	cue        bool // an SSN cue word ("social", "ssn") within the last few words
}

// tokens holds every digit token of a text, runs delimited by sep == sepNone.
type tokens struct {
	text   string
	list   []token
	digits []byte
}

func (t *tokens) digitsOf(a, b int) []byte { return t.digits[t.list[a].d0:t.list[b].d1] }

func (t *tokens) n(i int) int { return t.list[i].d1 - t.list[i].d0 }

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool  { return isDigit(c) || isLetter(c) }
func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Word classes the tokenizer tells apart, looked up once per word.
const (
	wordOther = iota
	wordDigit
	wordRepeat // "double", "triple"
	wordPlus
	wordLabel
	wordFiller
	wordSSNCue
)

type wordInfo struct {
	class uint8
	value uint8 // the digit, or the repetition count
}

var wordTable = func() map[string]wordInfo {
	m := map[string]wordInfo{"oh": {wordDigit, 0}, "double": {wordRepeat, 2}, "triple": {wordRepeat, 3},
		"plus": {wordPlus, 0}}
	for i, w := range []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"} {
		m[w] = wordInfo{wordDigit, uint8(i)}
	}
	// Labels name a number that is not a phone number ("order 4155550123", "invoice no.
	// 0123456789"); fillers may stand between a label and its number.
	for _, w := range []string{"order", "invoice", "tracking", "reference", "ref", "confirmation",
		"ticket", "case", "account", "policy", "id", "serial", "transaction", "booking",
		"reservation", "customer", "member", "receipt", "parcel", "shipment", "sku", "item"} {
		m[w] = wordInfo{wordLabel, 0}
	}
	for _, w := range []string{"number", "no", "num", "nr", "is", "was", "its"} {
		m[w] = wordInfo{wordFiller, 0}
	}
	for _, w := range []string{"ssn", "social", "security", "ss"} {
		m[w] = wordInfo{wordSSNCue, 0}
	}
	return m
}()

// classify looks an ASCII word up in wordTable, ignoring case, without allocating.
func classify(w string) wordInfo {
	var buf [16]byte
	if len(w) > len(buf) {
		return wordInfo{}
	}
	for i := 0; i < len(w); i++ {
		buf[i] = w[i] | 0x20
	}
	return wordTable[string(buf[:len(w)])]
}

// spokenDigit returns the digit a spoken word stands for, or -1.
func spokenDigit(w string) int {
	if wi := classify(w); wi.class == wordDigit {
		return int(wi.value)
	}
	return -1
}

// eqFold compares an ASCII word with a lower-case literal, ignoring case.
func eqFold(w, lower string) bool {
	if len(w) != len(lower) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

func wordIn(w string, set ...string) bool {
	for _, s := range set {
		if eqFold(w, s) {
			return true
		}
	}
	return false
}

// ssnCueWords is how many ordinary words after a cue word it still applies.
const ssnCueWords = 8

// scanTokens finds the digit tokens of text.
func scanTokens(text string, t *tokens, names map[string]bool) {
	t.text = text
	t.list = t.list[:0]
	t.digits = t.digits[:0]
	label, sinceCue := false, ssnCueWords+1
	pendingPlus := -1 // start of a "plus" word waiting for a digit token
	rep := 1          // digits of the next spoken token: 2 after "double", 3 after "triple"
	joinable := false // the last token can be joined by the next one
	lastEnd := 0
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case isDigit(c):
			j := i
			for j < len(text) && isDigit(text[j]) {
				j++
			}
			glued := gluedBefore(text, i) || gluedAfter(text, j)
			tok := token{start: i, end: j, pre: i, d0: len(t.digits), glued: glued}
			t.digits = append(t.digits, text[i:j]...)
			tok.d1 = len(t.digits)
			t.add(tok, joinable, lastEnd, pendingPlus, label, sinceCue)
			pendingPlus, label, joinable, lastEnd = -1, false, !glued, j
			i = j
		case isLetter(c):
			j := i
			for j < len(text) && isLetter(text[j]) {
				j++
			}
			w := text[i:j]
			wi := classify(w)
			if wi.class == wordRepeat {
				if k, e, ok := nextWord(text, j); ok {
					if d := classify(text[k:e]); d.class == wordDigit {
						rep, wi, j = int(wi.value), d, e
					}
				}
			}
			if wi.class == wordDigit {
				tok := token{start: i, end: j, pre: i, d0: len(t.digits), word: true}
				for k := 0; k < rep; k++ {
					t.digits = append(t.digits, '0'+wi.value)
				}
				tok.d1 = len(t.digits)
				t.add(tok, joinable, lastEnd, pendingPlus, label, sinceCue)
				pendingPlus, label, joinable, lastEnd, rep = -1, false, true, j, 1
				i = j
				continue
			}
			joinable = false
			pendingPlus = -1
			switch wi.class {
			case wordPlus:
				pendingPlus = i
			case wordLabel:
				label = true
			case wordFiller:
			default:
				label = false
			}
			if wi.class == wordSSNCue {
				sinceCue = 0
			} else if sinceCue <= ssnCueWords && wi.class != wordPlus {
				sinceCue++
			}
			i = j
		case c == '[':
			if e := markerEnd(text, i, names); e > 0 {
				// A marker ends runs and counts as no word, like the digits it replaced.
				pendingPlus, label, joinable = -1, false, false
				i = e
				continue
			}
			i++
		default:
			i++
		}
	}
}

// markerEnd returns the end of the marker ("[card]", "[order_id]") starting at i, or 0.
// Only the names in names are markers: text such as "[x4111111111111111]" must not hide
// a card number from the detectors.
func markerEnd(text string, i int, names map[string]bool) int {
	j := i + 1
	for j < len(text) && j-i <= MaxNameLen+1 {
		c := text[j]
		switch {
		case c == ']':
			if names[text[i+1:j]] {
				return j + 1
			}
			return 0
		case c >= 'a' && c <= 'z', isDigit(c), c == '_':
			j++
		default:
			return 0
		}
	}
	return 0
}

// gluedBefore reports whether a word other than a spoken digit ends at i ("A123"). A
// spoken digit ("1111three") does not glue: the phone or card it belongs to may become a
// marker, and then the digits would no longer be glued on a second pass.
func gluedBefore(text string, i int) bool {
	k := i
	for k > 0 && isLetter(text[k-1]) {
		k--
	}
	return k < i && !digitish(text[k:i])
}

// gluedAfter reports whether a word other than a spoken digit starts at j ("5pm").
func gluedAfter(text string, j int) bool {
	k := j
	for k < len(text) && isLetter(text[k]) {
		k++
	}
	return k > j && !digitish(text[j:k])
}

func digitish(w string) bool {
	c := classify(w).class
	return c == wordDigit || c == wordRepeat || c == wordPlus
}

// nextWord returns the bounds of the letters after single spaces from i, and whether the
// word ends at a non-letter.
func nextWord(text string, i int) (int, int, bool) {
	k := i
	for k < len(text) && text[k] == ' ' && k-i < 2 {
		k++
	}
	if k == i || k >= len(text) || !isLetter(text[k]) {
		return i, i, false
	}
	e := k
	for e < len(text) && isLetter(text[e]) {
		e++
	}
	return k, e, true
}

// add appends tok, joined to the previous token when the text between them is a separator.
func (t *tokens) add(tok token, joinable bool, lastEnd, pendingPlus int, label bool, sinceCue int) {
	tok.afterLabel = label
	tok.cue = sinceCue <= ssnCueWords
	between := t.text[lastEnd:tok.start]
	tok.sep = sepNone
	if joinable && !tok.glued && len(t.list) > 0 {
		tok.sep = classifySep(between)
	}
	if tok.start > 0 && t.text[tok.start-1] == '(' {
		tok.paren = true
		tok.pre = tok.start - 1
	}
	if tok.sep == sepNone {
		if pendingPlus >= 0 {
			tok.plus, tok.pre = true, pendingPlus
		} else if tok.start > 0 && t.text[tok.start-1] == '+' && !tok.word {
			tok.plus, tok.pre = true, tok.start-1
		}
	}
	t.list = append(t.list, tok)
}

// classifySep names the separator s between two tokens, or sepNone when s ends the run.
func classifySep(s string) sepKind {
	if len(s) == 0 || len(s) > 4 {
		return sepNone
	}
	spaces, dash, comma, open, closing := 0, 0, 0, 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t':
			spaces++
		case '-':
			dash++
		case ',':
			comma++
		case '(':
			open++
		case ')':
			closing++
		case '.':
			if len(s) == 1 {
				return sepDot
			}
			return sepNone
		default:
			return sepNone
		}
	}
	switch {
	case dash+comma+open+closing == 0:
		return sepSpace
	case dash == 1 && comma+open+closing == 0:
		return sepDash
	case comma == 1 && s[0] == ',' && spaces > 0 && dash+open+closing == 0:
		return sepComma
	case closing == 1 && s[0] == ')' && dash+comma+open == 0:
		return sepParen
	case open == 1 && s[len(s)-1] == '(' && dash+comma+closing == 0 && spaces > 0:
		return sepParen
	case closing == 1 && s[0] == ')' && dash == 1 && comma+open == 0:
		return sepDash
	}
	return sepNone
}
