package server_test

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// FuzzIdempotencyKey creates a knowledge base under any Idempotency-Key a client can send
// (made unique per input by a numbered prefix, so earlier inputs' keys do not answer),
// three times: with a body, the same body, another body. Properties (docs/api.md
// "Idempotency-Key"): a key of more than MaxIdempotencyKey characters is a 422 naming
// Idempotency-Key, every time, and creates nothing; any other key creates one knowledge
// base: the same body replays the first answer byte for byte (Idempotent-Replayed: true),
// another body is a 422 naming Idempotency-Key; the workspace's usage grows by one. Every
// refusal has the conventions' error shape.
func FuzzIdempotencyKey(f *testing.F) {
	s := testkit.NewServer(f, nil)
	var n atomic.Int64
	f.Add("k", "base")
	f.Add(strings.Repeat("x", 250), "n")
	f.Add(strings.Repeat("é", 200), "n")
	f.Add(strings.Repeat("\xff", 252), "n")
	f.Add("a b\tc", "tab")
	f.Add("\u00a0key\u00a0", "nbsp")
	f.Fuzz(func(t *testing.T, suffix, name string) {
		key := strconv.FormatInt(n.Add(1), 10) + "-" + suffix
		if strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) || strings.TrimRight(key, " \t") != key {
			return // no client can send it, or the server's header reader trims it
		}
		name = "kb " + strconv.Quote(name)
		if utf8.RuneCountInString(name) > 100 {
			name = name[:100]
		}
		first := map[string]any{"name": name}
		count := func() float64 {
			usage, _ := testkit.Request(t, s.URL, "GET", "/api/v1/subscription", s.Owner.Token, nil).Data()["usage"].(map[string]any)
			n, _ := usage["knowledge_bases"].(float64)
			return n
		}
		before := count()
		post := func(body map[string]any) *response {
			return testkit.Request(t, s.URL, "POST", "/api/v1/knowledge-bases", s.Owner.Token, body, "Idempotency-Key", key)
		}
		a, b, c := post(first), post(first), post(map[string]any{"name": "other " + name})
		if utf8.RuneCountInString(key) > data.MaxIdempotencyKey {
			for _, r := range []*response{a, b, c} {
				testkit.ExpectFields(t, r, "Idempotency-Key")
			}
			if after := count(); after != before {
				t.Fatalf("a refused key %q made %v knowledge bases", key, after-before)
			}
			return
		}
		testkit.Expect(t, a, 201)
		testkit.Expect(t, b, 201)
		if string(b.Body) != string(a.Body) || b.Header.Get("ETag") != a.Header.Get("ETag") || b.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("key %q: the same body answered\n%s\nthen\n%s (replayed %q)", key, a.Body, b.Body, b.Header.Get("Idempotent-Replayed"))
		}
		testkit.ExpectFields(t, c, "Idempotency-Key")
		if after := count(); after != before+1 {
			t.Fatalf("key %q made %v knowledge bases, want 1", key, after-before)
		}
	})
}
