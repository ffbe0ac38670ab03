package client

import (
	"math"
	"math/big"
	"net/http"
	"regexp"
	"testing"
	"time"
)

// delaySeconds is RFC 9110's delay-seconds: 1*DIGIT.
var delaySeconds = regexp.MustCompile(`^[0-9]+$`)

// FuzzParseRetryAfter: any Retry-After value reads as a delay that is never negative. A
// delay-seconds value reads as that many seconds, or as the longest Duration where that
// does not fit (so the policy's MaxRetryAfter refuses to wait it, rather than a wrapped
// product sending the retry early); an HTTP date reads as the time until it, 0 when past;
// anything else reads as 0 (no advice: the policy's own backoff).
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, v := range []string{"", "5", "-1", "soon", "0", "+5", "007", "9223372036", "9223372037", "18446744074",
		now.Add(90 * time.Second).Format(http.TimeFormat), now.Add(-time.Minute).Format(http.TimeFormat),
		"Thursday, 01-Jan-26 12:01:30 GMT", "Thu Jan  1 12:01:30 2026", "Fri, 31 Dec 9999 23:59:59 GMT"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := parseRetryAfter(v, now)
		if got < 0 {
			t.Fatalf("parseRetryAfter(%q) = %v, negative", v, got)
		}
		if delaySeconds.MatchString(v) {
			n, _ := new(big.Int).SetString(v, 10)
			want := n.Mul(n, big.NewInt(int64(time.Second)))
			if !want.IsInt64() {
				want.SetInt64(math.MaxInt64)
			}
			if int64(got) != want.Int64() {
				t.Fatalf("parseRetryAfter(%q) = %v, want %v", v, got, time.Duration(want.Int64()))
			}
			return
		}
		if at, err := http.ParseTime(v); err == nil {
			if want := max(at.Sub(now), 0); got != want {
				t.Fatalf("parseRetryAfter(%q) = %v, want %v (until %s)", v, got, want, at)
			}
			return
		}
		if got != 0 {
			t.Fatalf("parseRetryAfter(%q) = %v, want 0: neither seconds nor a date", v, got)
		}
	})
}
