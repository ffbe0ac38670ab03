package knowledge

import (
	"context"
	"fmt"
	"mime"
	"path"
	"strings"
	"unicode/utf8"
)

// ChunkID names the chunk at position seq of a source.
func ChunkID(sourceID string, seq int) string { return fmt.Sprintf("%s:%d", sourceID, seq) }

// ChunkSource splits a source's extracted text into chunks named by ChunkID, or returns
// ErrNoText when nothing indexable remains.
func ChunkSource(sourceID, text string) ([]Chunk, error) {
	pieces := ChunkText(text, ChunkOptions{})
	if len(pieces) == 0 {
		return nil, ErrNoText
	}
	chunks := make([]Chunk, len(pieces))
	for i, p := range pieces {
		chunks[i] = Chunk{ID: ChunkID(sourceID, i), SourceID: sourceID, Text: p}
	}
	return chunks, nil
}

// EmbedChunks sets each chunk's vector with e. On an error the chunks keep no vector: they
// are still found lexically, which beats refusing a source over an optional feature, so
// callers log the error and go on.
func EmbedChunks(ctx context.Context, e Embedder, chunks []Chunk) error {
	if e == nil || len(chunks) == 0 {
		return nil
	}
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	vecs, err := e.Embed(ctx, texts)
	if err == nil && len(vecs) != len(chunks) {
		err = fmt.Errorf("the embedder returned %d vectors for %d chunks", len(vecs), len(chunks))
	}
	if err != nil {
		return err
	}
	for i := range chunks {
		chunks[i].Vector = vecs[i]
	}
	return nil
}

// maxReason bounds a failure reason shown on a source.
const maxReason = 500

// Reason turns an error into a one-line failure reason for a source's record: whitespace
// folded, at most 500 bytes, cut on a character boundary.
func Reason(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// URLFilename gives Detect a name that carries a response's media type, so an HTML page
// at "/" is judged as HTML and a PDF at "/download?id=3" as a PDF.
func URLFilename(rawURL, contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "text/html", "application/xhtml+xml":
		return "page.html"
	case "application/pdf":
		return "page.pdf"
	case "application/json":
		return "page.json"
	case "text/markdown":
		return "page.md"
	case "text/csv":
		return "page.csv"
	case "text/plain":
		return "page.txt"
	}
	p := rawURL
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	return path.Base(p)
}

// ExtractFetched detects the format of a fetched url's body and extracts its text.
func ExtractFetched(rawURL, contentType string, body []byte) (string, error) {
	kind, err := Detect(URLFilename(rawURL, contentType), body)
	if err != nil {
		return "", err
	}
	return Extract(kind, body)
}

// Unsupported is the reason Detect refused a file, without the ErrUnsupported prefix, for
// a validation message.
func Unsupported(err error) string {
	return strings.TrimPrefix(err.Error(), ErrUnsupported.Error()+": ")
}
