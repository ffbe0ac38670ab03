package fulltext

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

func TestQueryTerms(t *testing.T) {
	long := strings.Repeat("é", MaxTermRunes+5)
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"Cancel my ORDER", []string{"cancel", "my", "order"}},
		{"  cancel,cancel!! Cancel ", []string{"cancel"}},
		{"Zürich straße 12b", []string{"zürich", "straße", "12b"}},
		{"東京 タワー", []string{"東京", "タワー"}},
		{"don't e-mail", []string{"don", "t", "e", "mail"}},
		{"?! … --", nil},
		{"", nil},
		{long, []string{strings.Repeat("é", MaxTermRunes)}},
	} {
		if got := QueryTerms(tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("QueryTerms(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
	if n := utf8.RuneCountInString(QueryTerms(long)[0]); n != MaxTermRunes {
		t.Errorf("a long word keeps %d characters", n)
	}
}

func TestCallTerms(t *testing.T) {
	c := &data.Call{
		Transcript: []data.TranscriptItem{{Content: "Cancel, cancel the order"}, {Content: "ORDER 48213"}},
		Analysis:   map[string]any{"summary": "wants refund", "score": 4.5, "nested": map[string]any{"tags": []any{"vip", true}}},
		Variables:  map[string]any{"customer": "Ada"},
		Metadata:   map[string]any{"crm": "secret"}, // metadata is not searched
	}
	want := map[string]int{"cancel": 2, "the": 1, "order": 2, "48213": 1, "wants": 1, "refund": 1, "4": 1, "5": 1, "vip": 1, "ada": 1}
	if got := CallTerms(c); !maps.Equal(got, want) {
		t.Errorf("CallTerms = %v, want %v", got, want)
	}
	// Bounds: distinct terms and frequencies are capped.
	var b strings.Builder
	for i := range MaxCallTerms + 10 {
		b.WriteString("w")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26)) + " ")
	}
	b.WriteString(strings.Repeat("same ", 300))
	got := CallTerms(&data.Call{Transcript: []data.TranscriptItem{{Content: b.String()}}})
	if len(got) != MaxCallTerms {
		t.Errorf("%d distinct terms, want the bound %d", len(got), MaxCallTerms)
	}
	got = CallTerms(&data.Call{Transcript: []data.TranscriptItem{{Content: strings.Repeat("same ", 300)}}})
	if got["same"] != MaxTermFrequency {
		t.Errorf("frequency %d, want the cap %d", got["same"], MaxTermFrequency)
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("filler words here ", 30)
	for _, tc := range []struct {
		name   string
		c      *data.Call
		terms  []string
		field  string
		marked []string
		cutL   bool // starts with …
		cutR   bool // ends with …
	}{
		{"whole utterance", &data.Call{Transcript: []data.TranscriptItem{{Content: "no"}, {Content: "Please CANCEL it, cancel!"}}},
			[]string{"cancel"}, "transcript[1].content", []string{"CANCEL", "cancel"}, false, false},
		{"cut both sides", &data.Call{Transcript: []data.TranscriptItem{{Content: long + "Zürich office " + long}}},
			[]string{"zürich"}, "transcript[0].content", []string{"Zürich"}, true, true},
		{"analysis", &data.Call{Analysis: map[string]any{"b": "nothing", "summary": "asked for a refund"}},
			[]string{"refund"}, "analysis.summary", []string{"refund"}, false, false},
		{"variables, a number", &data.Call{Variables: map[string]any{"ticket": 48213.0}},
			[]string{"48213"}, "variables.ticket", []string{"48213"}, false, false},
	} {
		field, text, spans, ok := Snippet(tc.c, tc.terms)
		if !ok || field != tc.field {
			t.Errorf("%s: field %q, %v", tc.name, field, ok)
			continue
		}
		runes := []rune(text)
		var marked []string
		for _, s := range spans {
			marked = append(marked, string(runes[s.Start:s.End]))
		}
		if !slices.Equal(marked, tc.marked) || strings.HasPrefix(text, "…") != tc.cutL || strings.HasSuffix(text, "…") != tc.cutR ||
			utf8.RuneCountInString(text) > SnippetRunes+2 {
			t.Errorf("%s: %q marks %q", tc.name, text, marked)
		}
	}
	if _, _, _, ok := Snippet(&data.Call{Transcript: []data.TranscriptItem{{Content: "hello"}}}, []string{"bye"}); ok {
		t.Error("a snippet without a match")
	}
}
