package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Numbers a user writes into a free-form value (a default variable, metadata, an
// analysis value, a tool call's arguments) are kept as written: decoded into Go's any
// they are json.Number, never float64, which would turn 12345678901234567890 into
// 12345678901234567000 (docs/api.md "Numbers in free-form values"). Every decoder of
// such values, the request's (strictjson), each engine's and the Go client's, goes
// through DecodeJSON.

// DecodeJSON is json.Unmarshal whose numbers in an any are json.Number: their text is kept.
// Like Unmarshal, it refuses anything after the value. Into a type that holds no any
// (an event, whose data is raw), it is json.Unmarshal itself: the Decoder UseNumber
// needs copies its input, which for a stream's 1 MiB events was a copy each.
//
// A free-form value itself, and a row (a call, an agent's configuration, a number, a
// recipient, a conversation and its items; a storage row type that shadows its free-form
// members), are read without the Decoder's
// copy (json_freeform.go, json_rows.go); the Decoder still gives the error of what a
// free-form value refuses.
func DecodeJSON(b []byte, v any) error {
	switch x := v.(type) {
	case *Call: // the exact type: CallHit, which embeds Call, has members of its own
		return decodeCallRow(b, x)
	case *AgentConfig:
		return decodeAgentConfigRow(b, x)
	case *Number:
		return decodeNumberRow(b, x)
	case *Recipient:
		return decodeRecipientRow(b, x)
	case *ConversationItem:
		return x.decodeRow(b)
	case *StoredConversation:
		return decodeStoredConversationRow(b, x)
	case *any, *map[string]any:
		if decodeFreeForm(b, v) {
			return nil
		}
	}
	if !holdsAny(reflect.TypeOf(v)) {
		return json.Unmarshal(b, v)
	}
	return decodeUseNumber(b, v)
}

// decodeUseNumber decodes b into v by a json.Decoder with UseNumber, which copies b: what
// DecodeJSON takes for a type holding an any that no row decoding covers, and for the
// error of a free-form value the in-place reader refuses. A variable so that a test sees
// which rows still take it.
var decodeUseNumber = func(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid JSON: data after the top-level value")
	}
	return nil
}

// anyTypes caches holdsAny: reflect.Type → bool.
var anyTypes sync.Map

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// holdsAny reports whether encoding/json, decoding into t, may store a number in an
// interface value: t is or holds one (through pointers, structs, slices, arrays, maps)
// that it decodes itself. A type with its own UnmarshalJSON decodes its numbers its own
// way (data.JSONObject keeps their text), so it does not count; nor does a member that a
// shallower one of the same JSON name shadows, as encoding/json never decodes into it
// (a row type shadows its free-form members so: callRow, bolt's agent row).
func holdsAny(t reflect.Type) bool {
	if t == nil {
		return true
	}
	if v, ok := anyTypes.Load(t); ok {
		return v.(bool)
	}
	r := holdsAnyWalk(t, map[reflect.Type]bool{})
	anyTypes.Store(t, r)
	return r
}

func holdsAnyWalk(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false // a recursive type: its other paths decide
	}
	seen[t] = true
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshalerType) {
		return false
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return holdsAnyWalk(t.Elem(), seen)
	case reflect.Struct:
		for _, f := range decodedFields(t) {
			if holdsAnyWalk(f, seen) {
				return true
			}
		}
	}
	return false
}

// decodedFields returns the types of the members encoding/json may decode into the
// struct t: its fields and those of its untagged embedded structs, flattened; of the
// fields sharing a JSON name only the shallowest (encoding/json's rule; a tie at one
// depth keeps them all, which can only say "holds an any" more often).
func decodedFields(t reflect.Type) []reflect.Type {
	type field struct {
		name  string
		depth int
		typ   reflect.Type
	}
	var fields []field
	// Breadth first, as encoding/json: a struct embedded at two depths counts at the
	// shallower.
	type embedded struct {
		t     reflect.Type
		depth int
	}
	next := []embedded{{t, 0}}
	expanded := map[reflect.Type]bool{}
	for len(next) > 0 {
		s := next[0]
		next = next[1:]
		if expanded[s.t] {
			continue
		}
		expanded[s.t] = true
		for i := range s.t.NumField() {
			f := s.t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" || !f.IsExported() && !f.Anonymous {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					next = append(next, embedded{ft, s.depth + 1})
					continue
				}
				if !f.IsExported() {
					continue
				}
			}
			if name == "" {
				name = f.Name
			}
			fields = append(fields, field{name, s.depth, f.Type})
		}
	}
	shallowest := map[string]int{}
	for _, f := range fields {
		if d, ok := shallowest[f.name]; !ok || f.depth < d {
			shallowest[f.name] = f.depth
		}
	}
	var types []reflect.Type
	for _, f := range fields {
		if f.depth == shallowest[f.name] {
			types = append(types, f.typ)
		}
	}
	return types
}

// DecimalKey is the canonical form of an exact number (json.Number, or an int): its sign,
// its digits without leading or trailing zeros and its exponent, "0" for any zero, so
// 1, 1.0 and 1e0 share a key and 12345678901234567890 and …891 do not. ok is false for a
// float64 (already rounded) or text that is no JSON number.
func DecimalKey(v any) (key string, ok bool) {
	var s string
	switch n := v.(type) {
	case int:
		s = strconv.Itoa(n)
	case int64:
		s = strconv.FormatInt(n, 10)
	case json.Number:
		s = string(n)
	default:
		return "", false
	}
	if !IsJSONNumber(s) {
		return "", false
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expText, _ := strings.Cut(strings.ToLower(s), "e")
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return "0", true
	}
	// The exponent may have any number of digits, hence big.Int; the digits' value is
	// digits × 10^(exp − len(frac) + trailing zeros dropped).
	exp := new(big.Int)
	if expText != "" {
		exp.SetString(strings.TrimPrefix(expText, "+"), 10)
	}
	trimmed := strings.TrimRight(digits, "0")
	exp.Add(exp, big.NewInt(int64(len(digits)-len(trimmed)-len(frac))))
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + exp.String(), true
}

// IsJSONNumber reports whether s is a number by JSON's grammar (RFC 8259).
func IsJSONNumber(s string) bool {
	i := 0
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if n := digits(); n == 0 || (n > 1 && s[i-n] == '0') {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// SameJSON reports whether two generic JSON trees (maps, slices, strings, booleans, nil
// and numbers, as DecodeJSON makes them) mean the same: objects member by member, arrays
// item by item, numbers as exact decimals (1 == 1.0 == 1e0; 12345678901234567890 !=
// 12345678901234567891). A float64, already rounded, equals only an equal float64.
func SameJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !SameJSON(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !SameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	ka, exactA := DecimalKey(a)
	kb, exactB := DecimalKey(b)
	if exactA || exactB {
		return exactA && exactB && ka == kb
	}
	return reflect.DeepEqual(a, b)
}

// NumbersFit reports whether every number in v (a generic JSON tree) is one a float64
// holds without overflow or rounding to 0, its exponent written in at most 3 digits: what
// both stores keep as written (PostgreSQL's numeric refuses exponents past 1000) and what
// a float64 decoding accepted before numbers kept their text.
func NumbersFit(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if !NumbersFit(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !NumbersFit(e) {
				return false
			}
		}
	case json.Number:
		mant, exp, _ := strings.Cut(strings.ToLower(string(x)), "e")
		f, err := strconv.ParseFloat(string(x), 64)
		zero := strings.Trim(mant, "-0.") == ""
		return err == nil && len(strings.TrimLeft(exp, "+-")) <= 3 && (f != 0 || zero)
	}
	return true
}

// NumberFloat is v as a float64 when v is a JSON number (json.Number, float64, int) that
// fits (NumbersFit): for sums and means, never for storing or showing it.
func NumberFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsInf(n, 0) && !math.IsNaN(n)
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil && NumbersFit(n)
	}
	return 0, false
}
