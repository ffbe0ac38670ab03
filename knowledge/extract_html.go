package knowledge

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// skippedElements hold no reader-visible text: their content is dropped entirely.
var skippedElements = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Math: true, atom.Iframe: true, atom.Object: true,
}

// blockElements start and end on their own line, as a browser would lay them out.
var blockElements = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true, atom.Br: true,
	atom.Dd: true, atom.Details: true, atom.Dialog: true, atom.Div: true, atom.Dl: true, atom.Dt: true,
	atom.Fieldset: true, atom.Figcaption: true, atom.Figure: true, atom.Footer: true, atom.Form: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Header: true, atom.Hr: true, atom.Li: true, atom.Main: true, atom.Nav: true, atom.Ol: true,
	atom.P: true, atom.Pre: true, atom.Section: true, atom.Summary: true, atom.Table: true,
	atom.Tr: true, atom.Ul: true, atom.Title: true, atom.Caption: true, atom.Option: true,
}

// paragraphElements also leave a blank line, so the chunker sees paragraph boundaries.
var paragraphElements = map[atom.Atom]bool{
	atom.P: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true,
	atom.H6: true, atom.Table: true, atom.Ul: true, atom.Ol: true, atom.Blockquote: true,
	atom.Pre: true, atom.Section: true, atom.Article: true, atom.Title: true, atom.Dl: true,
}

// extractHTML returns the visible text of an HTML document: scripts, styles and the like
// removed, entities decoded, block elements on their own lines, whitespace collapsed as a
// browser would except that <pre> keeps its line breaks. It uses the WHATWG tokenizer of
// golang.org/x/net/html, which copes with the malformed markup real pages are full of.
func extractHTML(content []byte) (string, error) {
	z := html.NewTokenizer(bytes.NewReader(content))
	z.SetMaxBuf(0)
	var b limitedBuilder
	skipDepth := 0        // > 0 while inside a skipped element
	var skipTag atom.Atom // the element being skipped (nested same-name elements counted)
	pre := 0
	newline := func(n int) {
		s := b.String()
		trailing := len(s) - len(strings.TrimRight(s, "\n"))
		for ; trailing < n && b.Len() > 0; trailing++ {
			b.WriteString("\n")
		}
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); err != io.EOF {
				return "", fmt.Errorf("cannot read the html file: %v", err)
			}
			if b.full {
				return "", fmt.Errorf("cannot read the html file: %w", errTooMuchText)
			}
			return b.String(), nil
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skipDepth > 0 {
				if a == skipTag && tt == html.StartTagToken {
					skipDepth++
				}
				continue
			}
			if skippedElements[a] && tt == html.StartTagToken {
				skipTag, skipDepth = a, 1
				continue
			}
			if a == atom.Pre {
				pre++
			}
			if (a == atom.Td || a == atom.Th) && b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
				b.WriteString(" | ")
			}
			if paragraphElements[a] {
				newline(2)
			} else if blockElements[a] {
				newline(1)
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skipDepth > 0 {
				if a == skipTag {
					skipDepth--
				}
				continue
			}
			if a == atom.Pre && pre > 0 {
				pre--
			}
			if paragraphElements[a] {
				newline(2)
			} else if blockElements[a] {
				newline(1)
			}
		case html.TextToken:
			if skipDepth > 0 {
				continue
			}
			text := string(z.Text()) // entities already decoded
			if pre == 0 {
				text = collapseSpace(text, b.Len() == 0 || strings.HasSuffix(b.String(), "\n") || strings.HasSuffix(b.String(), " "))
			}
			b.WriteString(text)
		}
	}
}

// collapseSpace turns every run of HTML whitespace into one space, dropping a leading one
// when the output already ends in a break.
func collapseSpace(s string, atBreak bool) string {
	var out strings.Builder
	space := atBreak
	for _, r := range s {
		if r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '\f' {
			if !space {
				out.WriteByte(' ')
				space = true
			}
			continue
		}
		out.WriteRune(r)
		space = false
	}
	return out.String()
}
