package knowledge

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestChunkTextShortAndEmpty(t *testing.T) {
	if got := ChunkText("  \n\n ", ChunkOptions{}); got != nil {
		t.Errorf("blank text: %q", got)
	}
	if got := ChunkText("One short paragraph.", ChunkOptions{}); len(got) != 1 || got[0] != "One short paragraph." {
		t.Errorf("short text: %q", got)
	}
}

func TestChunkTextPrefersParagraphs(t *testing.T) {
	p1 := strings.Repeat("Alpha words here. ", 10) // 180 chars
	p2 := strings.Repeat("Beta words here. ", 10)
	p3 := strings.Repeat("Gamma words here. ", 10)
	text := strings.Join([]string{p1, p2, p3}, "\n\n")
	chunks := ChunkText(text, ChunkOptions{Size: 400, Overlap: -1})
	if len(chunks) != 2 {
		t.Fatalf("%d chunks: %q", len(chunks), chunks)
	}
	if !strings.HasPrefix(chunks[0], "Alpha") || !strings.HasSuffix(chunks[0], "Beta words here.") || !strings.HasPrefix(chunks[1], "Gamma") {
		t.Errorf("cut not at a paragraph: %q", chunks)
	}
}

func TestChunkTextSentencesThenWords(t *testing.T) {
	var sentences []string
	for i := 0; i < 40; i++ {
		sentences = append(sentences, fmt.Sprintf("Sentence number %d ends here.", i))
	}
	chunks := ChunkText(strings.Join(sentences, " "), ChunkOptions{Size: 100, Overlap: -1})
	for _, c := range chunks {
		if !strings.HasPrefix(c, "Sentence") || !strings.HasSuffix(c, "here.") {
			t.Errorf("chunk not cut at a sentence: %q", c)
		}
	}
	// A single sentence longer than a chunk is cut between words.
	words := strings.Repeat("lorem ", 50)
	for _, c := range ChunkText(words, ChunkOptions{Size: 40, Overlap: -1}) {
		if strings.HasPrefix(c, " ") || strings.HasSuffix(c, " ") || strings.Contains(c, "lor ") {
			t.Errorf("word split: %q", c)
		}
	}
}

func TestChunkTextOverlap(t *testing.T) {
	var sentences []string
	for i := 0; i < 30; i++ {
		sentences = append(sentences, fmt.Sprintf("Fact %02d is stated.", i))
	}
	chunks := ChunkText(strings.Join(sentences, " "), ChunkOptions{Size: 100, Overlap: 40})
	if len(chunks) < 3 {
		t.Fatalf("%d chunks", len(chunks))
	}
	for i := 1; i < len(chunks); i++ {
		prevLast := chunks[i-1][strings.LastIndex(chunks[i-1], "Fact"):]
		if !strings.Contains(chunks[i], prevLast) {
			t.Errorf("chunk %d does not repeat %q from the chunk before", i, prevLast)
		}
	}
}

func TestChunkTextRunesAndDeterminism(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	alphabet := []rune("aé東😀 .\n")
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteRune(alphabet[rng.Intn(len(alphabet))])
	}
	b.WriteString(strings.Repeat("😀", 2000)) // one "word" far longer than a chunk
	text := b.String()
	opts := ChunkOptions{Size: 300, Overlap: 50}
	first := ChunkText(text, opts)
	for _, c := range first {
		if !utf8.ValidString(c) {
			t.Fatalf("chunk splits a rune: %q", c)
		}
		if n := utf8.RuneCountInString(c); n > 300 {
			t.Fatalf("chunk of %d runes, limit 300", n)
		}
	}
	second := ChunkText(text, opts)
	if strings.Join(first, "\x00") != strings.Join(second, "\x00") {
		t.Fatal("same input, different chunks")
	}
	// Without overlap, no text is lost or repeated: only whitespace may differ.
	noSpace := func(s string) string { return strings.Join(strings.Fields(s), "") }
	if got := noSpace(strings.Join(ChunkText(text, ChunkOptions{Size: 300, Overlap: -1}), " ")); got != noSpace(text) {
		t.Fatalf("chunks without overlap do not reassemble the text (%d vs %d bytes)", len(got), len(noSpace(text)))
	}
}

func TestChunkTextDefaults(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100) // 4,500 chars
	chunks := ChunkText(text, ChunkOptions{})
	for _, c := range chunks {
		if n := utf8.RuneCountInString(c); n > DefaultChunkSize || n < DefaultChunkSize/2 {
			t.Errorf("chunk of %d runes with the defaults", n)
		}
	}
	if len(chunks) < 6 || len(chunks) > 8 {
		t.Errorf("%d chunks for 4,500 characters at 800 with 100 overlap", len(chunks))
	}
}
