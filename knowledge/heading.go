package knowledge

import "strings"

// headingWeight is how much an occurrence of a word in a chunk's title or in a heading
// above it counts, against 1 for an occurrence in its text. docs/knowledge-bases.md gives
// the measurements it was chosen on.
const headingWeight = 2

// headingsAbove returns, for each chunk of one source in order, the Markdown headings it
// falls under and those inside it ("# Returns", "## By post"), joined by newlines: the
// outline a reader sees beside the text. Chunks follow each other in the source, so the
// outline at the start of a chunk is the one left by the chunks before it.
func headingsAbove(chunks []Chunk) []string {
	out := make([]string, len(chunks))
	var outline [6]string // by level
	for i, c := range chunks {
		var b strings.Builder
		for _, h := range outline {
			if h != "" {
				b.WriteString(h)
				b.WriteByte('\n')
			}
		}
		for line := range strings.Lines(c.Text) {
			level, title := markdownHeading(line)
			if level == 0 {
				continue
			}
			b.WriteString(title)
			b.WriteByte('\n')
			outline[level-1] = title
			for j := level; j < len(outline); j++ {
				outline[j] = ""
			}
		}
		out[i] = b.String()
	}
	return out
}

// markdownHeading returns the level (1 to 6) and text of an ATX heading line ("## Title"),
// or 0 when the line is none.
func markdownHeading(line string) (int, string) {
	level := 0
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || level >= len(line) || line[level] != ' ' && line[level] != '\t' {
		return 0, ""
	}
	return level, strings.TrimSpace(strings.Trim(strings.TrimSpace(line[level:]), "#"))
}
