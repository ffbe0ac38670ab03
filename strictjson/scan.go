package strictjson

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file splits JSON objects and arrays into their members without decoding them.
// The strict decoder used to json.Unmarshal every level into json.RawMessage, and
// encoding/json validates the whole value on each call, so a member five levels deep
// (llm_config.tools.N.phone_directory.M.name) was scanned about ten times. Here each level
// only skips over its members' bytes, once; leaves are decoded here too (unquoteBytes is
// encoding/json's own unquoting; numbers go to strconv), with fuzz tests holding both to
// encoding/json.
//
// Every caller hands in JSON that encoding/json has already checked whole (Object, or
// json.Valid in Decode), so the splitter is not a validator; it still refuses anything it does
// not understand rather than guessing, and its callers then report the value as being of
// the wrong type, as before.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the index just past the value starting at b[i] (no leading space).
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	default: // number, true, false, null
		start := i
		for i < len(b) && !isSpace(b[i]) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ':' {
			i++
		}
		return i, i > start
	}
}

// trim drops surrounding JSON white space.
func trim(b []byte) []byte {
	i := skipSpace(b, 0)
	j := len(b)
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// member is one member of a JSON object: its key, unquoted, and its value's bytes
// without surrounding space. Both may be slices of the object's own bytes.
type member struct {
	key, raw []byte
}

// scanObject appends the members of the JSON object b (no surrounding space) to ms, in
// their order; ok is false when b is not an object.
func scanObject(b []byte, ms []member) ([]member, bool) {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, false
	}
	i := skipSpace(b, 1)
	if b[i] == '}' {
		return ms, i == len(b)-1
	}
	for {
		if b[i] != '"' {
			return nil, false
		}
		end, ok := skipString(b, i)
		if !ok {
			return nil, false
		}
		key, ok := unquoteBytes(b[i:end])
		if !ok {
			return nil, false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		vend, ok := skipValue(b, i)
		if !ok {
			return nil, false
		}
		ms = append(ms, member{key, b[i:vend]})
		next, done, ok := afterItem(b, vend, '}')
		if !ok {
			return nil, false
		}
		if done {
			return ms, true
		}
		i = next
	}
}

// sortMembers sorts ms by key and keeps only the last of duplicate keys, as decoding
// into a map does: faults then come out in a stable order, and a member given twice is
// decoded once. Members already in order, as encoders write them, are left in place.
func sortMembers(ms []member) []member {
	sorted := true
	for i := 1; i < len(ms); i++ {
		if bytes.Compare(ms[i-1].key, ms[i].key) >= 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return ms
	}
	slices.SortStableFunc(ms, func(x, y member) int { return bytes.Compare(x.key, y.key) })
	out := ms[:0]
	for i := range ms {
		if i+1 < len(ms) && bytes.Equal(ms[i].key, ms[i+1].key) {
			continue
		}
		out = append(out, ms[i])
	}
	return out
}

// scanArray appends the items of the JSON array b (no surrounding space) to items; ok
// is false when b is not an array.
func scanArray(b []byte, items [][]byte) ([][]byte, bool) {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, false
	}
	i := skipSpace(b, 1)
	if b[i] == ']' {
		return items, i == len(b)-1
	}
	for {
		end, ok := skipValue(b, i)
		if !ok {
			return nil, false
		}
		items = append(items, b[i:end])
		next, done, ok := afterItem(b, end, ']')
		if !ok {
			return nil, false
		}
		if done {
			return items, true
		}
		i = next
	}
}

// afterItem steps over what follows an item of an object or array ending at i: a comma,
// giving the start of the next item, or the container's closing byte, which must end b.
func afterItem(b []byte, i int, closing byte) (next int, done, ok bool) {
	i = skipSpace(b, i)
	if i >= len(b) {
		return 0, false, false
	}
	switch b[i] {
	case ',':
		i = skipSpace(b, i+1)
		return i, false, i < len(b)
	case closing:
		return 0, true, i == len(b)-1
	}
	return 0, false, false
}

// unquoteBytes decodes the JSON string literal lit (no surrounding space) exactly as
// encoding/json's own unquoteBytes does: escapes, \u surrogate pairs (a lone or broken
// surrogate becomes U+FFFD), and invalid UTF-8 coerced to U+FFFD byte by byte. A literal
// without escapes or invalid UTF-8, the common case, comes back as a slice of lit itself.
func unquoteBytes(lit []byte) ([]byte, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return nil, false
	}
	s := lit[1 : len(lit)-1]
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' || c == '"' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return s, true
	}
	b := make([]byte, r, len(s)+2*utf8.UTFMax)
	copy(b, s[:r])
	for r < len(s) {
		switch c := s[r]; {
		case c == '\\':
			r++
			if r >= len(s) {
				return nil, false
			}
			switch s[r] {
			case '"', '\\', '/', '\'':
				b = append(b, s[r])
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := getu4(s[r-1:])
				if rr < 0 {
					return nil, false
				}
				r += 5
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != unicode.ReplacementChar {
						r += 6 // a valid pair
						b = utf8.AppendRune(b, dec)
						continue
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default:
				return nil, false
			}
			r++
		case c == '"', c < ' ':
			return nil, false
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return b, true
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// dupFrame is one open object or array of duplicateMember's walk.
type dupFrame struct {
	object    bool
	keysStart int    // where this object's member names begin in the walk's keys
	key       []byte // the object's current member name
	index     int    // the array's current item
	expectKey bool   // the object's next string is a member name
	seen      map[string]struct{}
}

// dupLinear is how many member names an object holds before duplicateMember looks them
// up in a set rather than comparing them one by one.
const dupLinear = 16

// duplicateMember returns the dot path of the first member whose name an object of b
// gives twice (RFC 7493 I-JSON refuses such objects: which of the two a reader takes is
// not defined), or ok false when there is none. Names are compared after unquoting, so
// "a" and "\u0061" are the same name. b must be valid JSON (as encoding/json has checked
// it). It is one pass over b that allocates only for deep or escaped text.
//
// It also stops at the first string, name or value, that holds U+0000 (nul true): JSON
// allows the escape, but PostgreSQL's text and jsonb cannot store the character, so one
// engine would keep what the other fails on. Only a body holding the escape is checked.
func duplicateMember(b []byte) (path string, nul, ok bool) {
	mayHoldNUL := bytes.Contains(b, nulEscape)
	var stackBuf [16]dupFrame
	var keysBuf [64][]byte
	stack, keys := stackBuf[:0], keysBuf[:0]
	for i := 0; i < len(b); {
		switch c := b[i]; c {
		case '{', '[':
			stack = append(stack, dupFrame{object: c == '{', keysStart: len(keys), expectKey: c == '{'})
			i++
		case '}', ']':
			if n := len(stack); n > 0 {
				keys = keys[:stack[n-1].keysStart]
				stack = stack[:n-1]
			}
			i++
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].object {
					stack[n-1].expectKey = true
				} else {
					stack[n-1].index++
				}
			}
			i++
		case '"':
			end, valid := stringEnd(b, i)
			if !valid {
				return "", false, false
			}
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
				top := &stack[n-1]
				top.expectKey = false
				key, valid := unquoteBytes(b[i:end])
				if !valid {
					return "", false, false
				}
				top.key = key
				if mayHoldNUL && bytes.IndexByte(key, 0) >= 0 {
					return dupPath(stack), true, true
				}
				if dupSeen(top, keys[top.keysStart:], key) {
					return dupPath(stack), false, true
				}
				keys = append(keys, key)
			} else if mayHoldNUL && bytes.Contains(b[i:end], nulEscape) {
				if v, valid := unquoteBytes(b[i:end]); valid && bytes.IndexByte(v, 0) >= 0 {
					return dupPath(stack), true, true
				}
			}
			i = end
		default:
			i++
			for i < len(b) && !structural[b[i]] {
				i++
			}
		}
	}
	return "", false, false
}

// nulMessage is the fault of a text holding U+0000, a character no engine's text keeps
// alike (see duplicateMember).
func nulMessage(path string) string {
	return fmt.Sprintf("The %s field must not contain U+0000 (a NUL character).", path)
}

// nulEscape is how JSON writes U+0000 (a raw NUL byte in a string is not JSON at all).
var nulEscape = []byte(`\u0000`)

// structural marks the bytes duplicateMember stops at.
var structural = [256]bool{'{': true, '}': true, '[': true, ']': true, ',': true, '"': true}

// stringEnd is skipString by bytes.IndexByte, which is vectorised: the strings of a body
// are most of its bytes. A quote is escaped when an odd number of backslashes precede it.
func stringEnd(b []byte, i int) (int, bool) {
	for j := i + 1; ; {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		q := j + k
		n := 0
		for q-1-n > i && b[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// dupSeen reports whether key is among names, the member names the object f has given so
// far; past dupLinear names it keeps them in a set.
func dupSeen(f *dupFrame, names [][]byte, key []byte) bool {
	if f.seen == nil && len(names) < dupLinear {
		for _, k := range names {
			if bytes.Equal(k, key) {
				return true
			}
		}
		return false
	}
	if f.seen == nil {
		f.seen = make(map[string]struct{}, 2*len(names))
		for _, k := range names {
			f.seen[string(k)] = struct{}{}
		}
	}
	if _, dup := f.seen[string(key)]; dup {
		return true
	}
	f.seen[string(key)] = struct{}{}
	return false
}

// dupPath joins the stack's member names and item indexes into a dot path.
func dupPath(stack []dupFrame) string {
	var p strings.Builder
	for i, f := range stack {
		if i > 0 {
			p.WriteByte('.') // even after an empty member name: "" then ".0", not "0"
		}
		if f.object {
			p.Write(f.key)
		} else {
			p.WriteString(strconv.Itoa(f.index))
		}
	}
	return p.String()
}
