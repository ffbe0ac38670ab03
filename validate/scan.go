package validate

import (
	"encoding/json"
	"unicode/utf8"
)

// This file splits JSON objects and arrays into their members without decoding them.
// The strict decoder used to json.Unmarshal every level into json.RawMessage, and
// encoding/json validates the whole value on each call, so a member five levels deep
// (llm_config.tools.N.phone_directory.M.name) was scanned about ten times. Here each level
// only skips over its members' bytes, once; leaves are decoded by encoding/json, or by a
// fast path when that gives the same result.
//
// Every caller hands in JSON that encoding/json has already parsed whole (Object, or
// Merge's output), so the splitter is not a validator; it still refuses anything it does
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

// splitObject returns the members of the JSON object raw; the last of duplicate keys wins,
// as with encoding/json. ok is false when raw is not an object.
func splitObject(raw []byte) (map[string]json.RawMessage, bool) {
	b := trim(raw)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, false
	}
	obj := map[string]json.RawMessage{}
	i := skipSpace(b, 1)
	if b[i] == '}' {
		return obj, i == len(b)-1
	}
	for {
		if b[i] != '"' {
			return nil, false
		}
		end, ok := skipString(b, i)
		if !ok {
			return nil, false
		}
		key, ok := unquote(b[i:end])
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
		obj[key] = json.RawMessage(b[i:vend])
		i = skipSpace(b, vend)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
			if i >= len(b) {
				return nil, false
			}
		case '}':
			return obj, i == len(b)-1
		default:
			return nil, false
		}
	}
}

// splitArray returns the items of the JSON array raw; ok is false when raw is not one.
func splitArray(raw []byte) ([]json.RawMessage, bool) {
	b := trim(raw)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, false
	}
	items := []json.RawMessage{}
	i := skipSpace(b, 1)
	if b[i] == ']' {
		return items, i == len(b)-1
	}
	for {
		end, ok := skipValue(b, i)
		if !ok {
			return nil, false
		}
		items = append(items, json.RawMessage(b[i:end]))
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
			if i >= len(b) {
				return nil, false
			}
		case ']':
			return items, i == len(b)-1
		default:
			return nil, false
		}
	}
}

// unquote decodes a JSON string literal. Plain ASCII without escapes is sliced directly;
// anything else goes through encoding/json, so escapes and invalid UTF-8 are treated
// exactly as before.
func unquote(lit []byte) (string, bool) {
	lit = trim(lit)
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	inner := lit[1 : len(lit)-1]
	plain := true
	for _, c := range inner {
		if c < 0x20 || c == '\\' || c == '"' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return "", false
	}
	return s, true
}
