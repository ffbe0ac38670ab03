package redact

import (
	"strings"
	"sync"
)

func isLocalChar(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// emailSpans finds written addresses: local@domain where the domain has a dot and ends
// in a label of two or more letters.
func emailSpans(text string) [][2]int {
	var spans [][2]int
	prevEnd := 0
	for off := 0; ; {
		at := strings.IndexByte(text[off:], '@')
		if at < 0 {
			return spans
		}
		at += off
		off = at + 1
		l := at
		for l > prevEnd && isLocalChar(text[l-1]) {
			l--
		}
		for l < at && text[l] == '.' {
			l++
		}
		r := domainEnd(text, at+1)
		if l == at || r < 0 {
			continue
		}
		spans = append(spans, [2]int{l, r})
		prevEnd, off = r, r
	}
}

// domainEnd returns the end of the longest domain starting at i: labels of letters, digits
// and dashes joined by single dots, the last one of two or more letters. It returns -1 when
// there is none. A domain running on into other characters ends at its last good label
// ("b.io-4111…" and "b.io4111…" give "b.io"), so that replacing what follows by a marker
// never turns text into an address on a second pass.
func domainEnd(text string, i int) int {
	if i >= len(text) || !isAlnum(text[i]) {
		return -1
	}
	end, dots := -1, 0
	segLetters, segLen := true, 0 // the run of alphanumerics since the last '.' or '-'
	afterDot := false             // that run started right after a '.'
	for k := i; ; k++ {
		if k < len(text) && isAlnum(text[k]) {
			if segLetters && isDigit(text[k]) && dots > 0 && afterDot && segLen >= 2 {
				end = k // "b.io4111…": the digits may become a marker, "b.io" stays
			}
			segLetters = segLetters && isLetter(text[k])
			segLen++
			continue
		}
		if dots > 0 && afterDot && segLetters && segLen >= 2 {
			end = k
		}
		if k >= len(text) || k+1 >= len(text) || !isAlnum(text[k+1]) {
			return end
		}
		switch text[k] {
		case '.':
			dots++
			afterDot = true
		case '-':
			afterDot = false
		default:
			return end
		}
		segLetters, segLen = true, 0
	}
}

// A spoken address ends in one of these top-level domains ("… dot com").
func isSpokenTLD(w string) bool {
	return wordIn(w, "com", "net", "org", "edu", "gov", "io", "co", "uk", "us", "de", "fr", "ca",
		"au", "info", "biz", "me", "ai", "app", "dev", "es", "it", "nl", "ch", "eu", "in", "ie")
}

func isEmailCue(w string) bool { return wordIn(w, "email", "e-mail", "mail", "address", "emails") }

// A one-word local part that is one of these is a sentence ("look me at …"), not an address.
func isStopLocal(w string) bool {
	return wordIn(w, "me", "us", "you", "him", "her", "them", "it", "is", "are", "was", "were",
		"be", "am", "i", "we", "they", "he", "she", "look", "looked", "find", "found", "here",
		"there", "home", "work", "online", "site", "website", "page", "visit", "go", "went",
		"address", "email", "mail", "e-mail", "and", "or", "the", "a", "an", "available", "that")
}

type word struct{ start, end int }

// wordPool keeps the word lists of spoken-address scans between calls.
var wordPool = sync.Pool{New: func() any { return new([]word) }}

// hasWordAt reports whether " at " occurs in text, in any case: most texts have no spoken
// address and need no split into words.
func hasWordAt(text string) bool {
	for i := 1; i+2 < len(text); i++ {
		if text[i]|0x20 == 'a' && text[i+1]|0x20 == 't' && text[i-1] == ' ' && text[i+2] == ' ' {
			return true
		}
	}
	return false
}

// words splits text into words of letters and digits, keeping inner ".", "_" and "-"
// ("john.smith", "gmail.com"); a bracketed marker ("[email]") is no word.
func words(text string, ws []word, names map[string]bool) []word {
	for i := 0; i < len(text); {
		if !isAlnum(text[i]) {
			if text[i] == '[' {
				if e := markerEnd(text, i, names); e > 0 {
					i = e
					continue
				}
			}
			i++
			continue
		}
		j := i + 1
		for j < len(text) && (isAlnum(text[j]) ||
			(text[j] == '.' || text[j] == '_' || text[j] == '-') && j+1 < len(text) && isAlnum(text[j+1])) {
			j++
		}
		ws = append(ws, word{i, j})
		i = j
	}
	return ws
}

// emailCueWords is how many words before a spoken address an "email" cue may stand.
const emailCueWords = 10

// spokenEmailSpans finds addresses read aloud: "john dot smith at example dot com". The
// domain must have a spoken or written dot and end in a common top-level domain. A local
// part of one plain word ("jane at acme dot com", which is as often a web site) counts
// only after a cue word such as "email" or "address".
func spokenEmailSpans(text string, names map[string]bool) [][2]int {
	if !hasWordAt(text) {
		return nil
	}
	var spans [][2]int
	buf := wordPool.Get().(*[]word)
	defer wordPool.Put(buf)
	*buf = words(text, (*buf)[:0], names)
	ws := *buf
	claimed := 0       // words before this index may not join a new match
	var inMatch []bool // words inside earlier matches, skipped when looking for a cue
	for i := 1; i+1 < len(ws); i++ {
		w := text[ws[i].start:ws[i].end]
		if !eqFold(w, "at") || !spaced(text, ws[i-1], ws[i]) || !spaced(text, ws[i], ws[i+1]) {
			continue
		}
		end, ok := spokenDomain(text, ws, i+1)
		if !ok {
			continue
		}
		first, plain := spokenLocal(text, ws, i-1, claimed)
		if first < 0 {
			continue
		}
		if plain {
			lw := text[ws[first].start:ws[first].end]
			if isStopLocal(lw) || !emailCueBefore(text, ws, first, inMatch) {
				continue
			}
		}
		spans = append(spans, [2]int{ws[first].start, ws[end].end})
		if inMatch == nil {
			inMatch = make([]bool, len(ws))
		}
		for k := first; k <= end; k++ {
			inMatch[k] = true
		}
		claimed = end + 1
		i = end
	}
	return spans
}

func isJoiner(w string) bool { return wordIn(w, "dot", "underscore", "dash", "hyphen") }

// spokenDomain reads "example dot com" or "example.com" from word i, returning its last word.
func spokenDomain(text string, ws []word, i int) (int, bool) {
	w := text[ws[i].start:ws[i].end]
	if eqFold(w, "at") || isJoiner(w) {
		return 0, false
	}
	dots := strings.Count(w, ".")
	last, lastWord := i, w[strings.LastIndexByte(w, '.')+1:]
	for k := i + 1; k+1 < len(ws); k += 2 {
		if !eqFold(text[ws[k].start:ws[k].end], "dot") || !spaced(text, ws[k-1], ws[k]) ||
			!spaced(text, ws[k], ws[k+1]) {
			break
		}
		nw := text[ws[k+1].start:ws[k+1].end]
		if eqFold(nw, "at") || isJoiner(nw) {
			break
		}
		dots++
		last, lastWord = k+1, nw[strings.LastIndexByte(nw, '.')+1:]
	}
	return last, dots > 0 && isSpokenTLD(lastWord)
}

// spokenLocal reads the local part ending at word i backwards ("john dot smith"), not
// reaching words before stop. plain reports a single word with no digit or inner dot.
func spokenLocal(text string, ws []word, i, stop int) (first int, plain bool) {
	if i < stop {
		return -1, false
	}
	w := text[ws[i].start:ws[i].end]
	if eqFold(w, "at") || isJoiner(w) {
		return -1, false
	}
	first = i
	for k := i - 1; k-1 >= stop; k -= 2 {
		if !isJoiner(text[ws[k].start:ws[k].end]) || !spaced(text, ws[k], ws[k+1]) ||
			!spaced(text, ws[k-1], ws[k]) {
			break
		}
		pw := text[ws[k-1].start:ws[k-1].end]
		if eqFold(pw, "at") || isJoiner(pw) {
			break
		}
		first = k - 1
	}
	plain = first == i && !strings.ContainsAny(w, "0123456789._-")
	return first, plain
}

// spaced reports whether only one space stands between two words.
func spaced(text string, a, b word) bool { return b.start == a.end+1 && text[a.end] == ' ' }

// emailCueBefore looks for a cue word among the emailCueWords words before word i. Words
// of earlier matches do not count, so a second pass, where each match is a marker and no
// word, counts the same words.
func emailCueBefore(text string, ws []word, i int, inMatch []bool) bool {
	seen := 0
	for k := i - 1; k >= 0 && seen < emailCueWords; k-- {
		if inMatch != nil && inMatch[k] || numeric(text[ws[k].start:ws[k].end]) {
			continue
		}
		seen++
		if isEmailCue(text[ws[k].start:ws[k].end]) {
			return true
		}
	}
	return false
}

// numeric reports a word the digit detectors may replace by a marker later ("4111",
// "415-555-0123", "four", "double", "plus"), which a cue search must not count.
func numeric(w string) bool {
	if spokenDigit(w) >= 0 || wordIn(w, "double", "triple", "plus") {
		return true
	}
	for i := 0; i < len(w); i++ {
		if isLetter(w[i]) {
			return false
		}
	}
	return true
}
