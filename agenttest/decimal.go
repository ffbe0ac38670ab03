package agenttest

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// decimal is the canonical form of an exact number (json.Number or int): its sign, its
// digits without leading or trailing zeros and its exponent, "0" for any zero. ok is false
// for a float64 (already rounded) or text that is no JSON number.
func decimal(v any) (key string, ok bool) {
	var s string
	switch n := v.(type) {
	case int:
		s = strconv.Itoa(n)
	case json.Number:
		s = string(n)
	default:
		return "", false
	}
	if !isJSONNumber(s) {
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

// isJSONNumber reports whether s is a number by JSON's grammar (RFC 8259).
func isJSONNumber(s string) bool {
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
