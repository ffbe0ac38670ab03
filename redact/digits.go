package redact

// window is a candidate: tokens a..b of one run and what they have in common.
type window struct {
	a, b   int
	digits []byte
	spoken bool  // every token spoken or a single ASCII digit ("4 1 1 1", "four one")
	ascii  bool  // every token ASCII digits
	seps   uint8 // bit (1 << sepKind) for each separator inside the window
	// fresh: the first token starts its run or directly follows a window this detector
	// took. A second pass sees the same, as that window is then a marker, which ends runs.
	fresh bool
}

func (w *window) only(kinds ...sepKind) bool {
	var allowed uint8
	for _, k := range kinds {
		allowed |= 1 << k
	}
	return w.seps&^allowed == 0
}

// claimWindows walks every run left to right; at each token it takes the longest window of
// at most maxDigits digits that accept allows and continues after it, else moves one token
// on. A window's validity depends only on its own tokens, so the greedy walk finds on the
// output what it found on the input (see tokens.go).
func claimWindows(t *tokens, maxDigits int, accept func(w *window) bool, out [][2]int) [][2]int {
	claimedTo := -1 // the last token of the last window taken
	var w window    // one for the whole walk: accept may not keep it
	for a := 0; a < len(t.list); {
		best := -1
		w = window{a: a, spoken: true, ascii: true, fresh: t.list[a].sep == sepNone || claimedTo == a-1}
		digits := 0
		for b := a; b < len(t.list); b++ {
			tok := &t.list[b]
			if b > a {
				if tok.sep == sepNone {
					break
				}
				w.seps |= 1 << tok.sep
			}
			digits += tok.d1 - tok.d0
			if digits > maxDigits {
				break
			}
			if tok.word {
				w.ascii = false
			} else if tok.d1-tok.d0 > 1 {
				w.spoken = false
			}
			w.b = b
			w.digits = t.digits[t.list[a].d0:tok.d1]
			if accept(&w) {
				best = b
			}
		}
		if best < 0 {
			a++
			continue
		}
		out = append(out, [2]int{a, best})
		claimedTo = best
		a = best + 1
	}
	return out
}

// groupsAre reports whether the window's tokens have exactly the given digit counts.
func groupsAre(t *tokens, w *window, sizes ...int) bool {
	if w.b-w.a+1 != len(sizes) {
		return false
	}
	for i, n := range sizes {
		if t.n(w.a+i) != n {
			return false
		}
	}
	return true
}

// luhn reports whether d passes the Luhn check.
func luhn(d []byte) bool {
	sum, double := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i] - '0')
		if double {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		double = !double
	}
	return sum%10 == 0
}

func prefixNum(d []byte, n int) int {
	v := 0
	for i := 0; i < n && i < len(d); i++ {
		v = v*10 + int(d[i]-'0')
	}
	return v
}

// cardIIN reports whether d starts like a card of a major network with a length that
// network issues (docs/redaction.md lists the table).
func cardIIN(d []byte) bool {
	n := len(d)
	p1, p2, p3, p4 := prefixNum(d, 1), prefixNum(d, 2), prefixNum(d, 3), prefixNum(d, 4)
	switch {
	case p1 == 4: // Visa
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720: // Mastercard
		return n == 16
	case p2 == 34 || p2 == 37: // American Express
		return n == 15
	case p3 >= 300 && p3 <= 305, p2 == 36, p2 == 38, p2 == 39: // Diners Club
		return n >= 14 && n <= 19
	case p4 >= 3528 && p4 <= 3589: // JCB
		return n >= 16 && n <= 19
	case p1 == 6, p2 == 50, p2 >= 56 && p2 <= 58: // Discover, UnionPay, Maestro, RuPay
		return n >= 13 && n <= 19
	case p1 == 1: // UATP
		return n == 15
	}
	return false
}

// acceptCard: 13 to 19 digits passing Luhn. One unbroken group needs nothing more; a
// number assembled from groups or spoken digits must also start like a card of its length,
// since unrelated numbers said in a row can pass Luhn by chance (one time in ten).
func acceptCard(t *tokens, w *window) bool {
	n := len(w.digits)
	if n < 13 || n > 19 {
		return false
	}
	if w.a == w.b && w.ascii {
		return luhn(w.digits)
	}
	if !w.only(sepSpace, sepDash, sepComma, sepDot) || !(w.spoken || w.ascii) {
		return false
	}
	// Dots group a written card only when every separator is one ("4242.4242.4242.4242"),
	// as they group a phone number.
	if w.seps&(1<<sepDot) != 0 && (w.seps != 1<<sepDot || w.spoken) {
		return false
	}
	if w.seps&(1<<sepComma) != 0 && !w.spoken {
		return false
	}
	if !w.spoken && !cardGroups(t, w) {
		return false
	}
	return cardIIN(w.digits) && luhn(w.digits)
}

// cardGroups checks the grouping of a card written in groups: 3 to 6 digits each ("4111
// 1111 …", "3782 822463 10005"), the last 2 to 6 ("3056 9309 0259 04"), so that counting
// "1 2 3 … 13" contains no card. Unlike a phone number, a card window need not begin its
// run: whether it does can change when a later detector replaces the numbers before it,
// and a second pass would then find a card the first did not.
func cardGroups(t *tokens, w *window) bool {
	for i := w.a; i <= w.b; i++ {
		n := t.n(i)
		if n > 6 || n < 3 && (i < w.b || n < 2) {
			return false
		}
	}
	return true
}

// ssnValid excludes the numbers the Social Security Administration never issues.
func ssnValid(d []byte) bool {
	area, group, serial := prefixNum(d, 3), prefixNum(d[3:], 2), prefixNum(d[5:], 4)
	return area != 0 && area != 666 && area < 900 && group != 0 && serial != 0
}

// acceptSSN: AAA-GG-SSSS (dashes or spaces); nine digits in one group or read digit by digit
// only after a cue word ("social security number", "SSN"), since nine digits alone are as
// often a ZIP+4 or a routing number.
func acceptSSN(t *tokens, w *window) bool {
	if len(w.digits) != 9 || !ssnValid(w.digits) {
		return false
	}
	switch {
	case w.ascii && groupsAre(t, w, 3, 2, 4):
		return w.seps == 1<<sepDash || w.seps == 1<<sepSpace
	case w.ascii && w.a == w.b:
		return t.list[w.a].cue
	case w.spoken:
		return t.list[w.a].cue && w.only(sepSpace, sepComma, sepDash)
	}
	return false
}

// nanp checks a ten-digit North American number: area and exchange codes start with 2-9
// and the area code is not an N11 service code.
func nanp(d []byte) bool {
	return len(d) == 10 && d[0] >= '2' && d[3] >= '2' && !(d[1] == '1' && d[2] == '1')
}

// acceptPhone: E.164 ("+" or "plus" then 8 to 15 digits), NANP (ten digits, or eleven with
// a leading 1) and national numbers with a trunk 0 (UK, FR, DE and most of Europe: 10 to 12
// digits), written in the usual groupings or read digit by digit.
func acceptPhone(t *tokens, w *window) bool {
	d := w.digits
	if !(w.spoken || w.ascii) || !w.only(sepSpace, sepDash, sepDot, sepParen, sepComma) {
		return false
	}
	if w.seps&(1<<sepComma) != 0 && !w.spoken {
		return false
	}
	if w.seps&(1<<sepDot) != 0 && w.seps != 1<<sepDot {
		return false
	}
	first := &t.list[w.a]
	if first.plus {
		return e164(d)
	}
	if first.afterLabel {
		return false // "order 4155550123": an identifier, not a phone number
	}
	if w.a == w.b && first.glued {
		return false // "NL91ABNA0417164300": part of a longer code
	}
	if !w.spoken && !w.fresh {
		return false // the tail of a longer run of groups (an IBAN, a tracking number)
	}
	switch {
	case len(d) == 10 && nanp(d), len(d) == 11 && d[0] == '1' && nanp(d[1:]):
		return w.spoken || w.a == w.b || groupsAre(t, w, 3, 3, 4) || groupsAre(t, w, 1, 3, 3, 4) ||
			groupsAre(t, w, 3, 7) || groupsAre(t, w, 1, 10)
	case len(d) >= 10 && len(d) <= 12 && d[0] == '0' && d[1] != '0':
		return w.spoken || w.a == w.b || nationalGroups(t, w)
	}
	return false
}

// nationalGroups accepts the groupings of national numbers with a trunk 0: five pairs
// (FR "01 23 45 67 89"), or an area code of 3 to 5 digits and one or two groups of at least
// 3 digits (UK "020 7946 0958", "07700 900123", "0161 496 0000"; DE "030 12345678").
func nationalGroups(t *tokens, w *window) bool {
	groups := w.b - w.a + 1
	if groups == 5 && len(w.digits) == 10 {
		return groupsAre(t, w, 2, 2, 2, 2, 2)
	}
	if groups < 2 || groups > 3 || t.n(w.a) < 3 || t.n(w.a) > 5 {
		return false
	}
	for i := w.a + 1; i <= w.b; i++ {
		if t.n(i) < 3 {
			return false
		}
	}
	return true
}

// e164 checks digits that followed a "+": a country code and a national number of the
// length that country uses for the few countries checked, else 8 to 15 digits.
func e164(d []byte) bool {
	if len(d) < 8 || len(d) > 15 || d[0] == '0' {
		return false
	}
	switch {
	case d[0] == '1':
		return len(d) == 11 && nanp(d[1:])
	case d[0] == '4' && d[1] == '4':
		return (len(d) == 12 || len(d) == 11) && d[2] != '0'
	case d[0] == '3' && d[1] == '3':
		return len(d) == 11 && d[2] != '0'
	case d[0] == '4' && d[1] == '9':
		return len(d) >= 9 && d[2] != '0'
	}
	return true
}

// cardSpans, ssnSpans and phoneSpans return the byte ranges of their matches in t.text.
func cardSpans(t *tokens) [][2]int {
	return windowSpans(t, claimWindows(t, 19, func(w *window) bool { return acceptCard(t, w) }, nil), false)
}

func ssnSpans(t *tokens) [][2]int {
	return windowSpans(t, claimWindows(t, 9, func(w *window) bool { return acceptSSN(t, w) }, nil), false)
}

func phoneSpans(t *tokens) [][2]int {
	return windowSpans(t, claimWindows(t, 15, func(w *window) bool { return acceptPhone(t, w) }, nil), true)
}

// windowSpans turns token windows into byte ranges; a phone keeps its "+", "plus" or "("
// prefix and the ")" closing a last group in parentheses.
func windowSpans(t *tokens, ws [][2]int, prefix bool) [][2]int {
	spans := ws[:0]
	for _, w := range ws {
		a, b := &t.list[w[0]], &t.list[w[1]]
		s, e := a.start, b.end
		if prefix {
			s = a.pre
			if b.paren && e < len(t.text) && t.text[e] == ')' {
				e++
			}
		}
		spans = append(spans, [2]int{s, e})
	}
	return spans
}
