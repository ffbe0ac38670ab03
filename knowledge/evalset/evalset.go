// Package evalset holds the retrieval evaluation set and the harness that measures a
// ranking on it (docs/knowledge-bases.md, "Retrieval quality"). A set is a directory of
// Markdown files, one knowledge base each, in the form parse reads; the set built into the
// binary is data/*.md (sources and licences in data/README.md).
package evalset

import (
	"bufio"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed data/*.md
var builtin embed.FS

// Base is one knowledge base of a set: its sources, and questions whose answers are
// passages of those sources.
type Base struct {
	Name      string
	Sources   []Source
	Questions []Question
}

// Source is one text source: a title and its content. The questions' own wording never
// appears in Content; only their answers do. Published is the source as its material was
// published: each question on a line of its own before its answer.
type Source struct {
	Title     string
	Content   string
	Published string
}

// Question asks for Answer, a passage of the content of Sources[Source].
type Question struct {
	Text   string
	Source int
	Answer string
}

// Builtin returns the evaluation set shipped with voiceapi.
func Builtin() ([]Base, error) {
	sub, err := fs.Sub(builtin, "data")
	if err != nil {
		return nil, err
	}
	return Load(sub)
}

// Load reads every *.md file of fsys as one knowledge base, in name order.
func Load(fsys fs.FS) ([]Base, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Base
	for _, name := range names {
		if strings.EqualFold(name, "README.md") {
			continue
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		base, err := parse(strings.TrimSuffix(path.Base(name), ".md"), string(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, base)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no *.md knowledge bases found")
	}
	return out, nil
}

// parse reads one knowledge base:
//
//	# source: <title>        starts a source
//	<text>                   before the first question: the source's own text
//	## Q: <question>         starts a question about this source
//	<text>                   its answer, which becomes part of the source's content
//
// A source's content is its own text and its answers in order, blank lines between.
func parse(name, text string) (Base, error) {
	base := Base{Name: name}
	var parts []string     // of the current source
	var published []string // the same with each question before its answer
	var answer []string
	inQuestion := false
	flushAnswer := func() {
		if !inQuestion {
			return
		}
		q := &base.Questions[len(base.Questions)-1]
		q.Answer = strings.TrimSpace(strings.Join(answer, "\n"))
		parts = append(parts, q.Answer)
		published = append(published, q.Text+"\n\n"+q.Answer)
		answer, inQuestion = nil, false
	}
	flushSource := func() {
		flushAnswer()
		if n := len(base.Sources); n > 0 {
			base.Sources[n-1].Content = strings.TrimSpace(strings.Join(parts, "\n\n"))
			base.Sources[n-1].Published = strings.TrimSpace(strings.Join(published, "\n\n"))
		}
		parts, published = nil, nil
	}
	var own []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "# source:"):
			if len(own) > 0 {
				parts = append(parts, strings.TrimSpace(strings.Join(own, "\n")))
				published = append(published, strings.TrimSpace(strings.Join(own, "\n")))
				own = nil
			}
			flushSource()
			base.Sources = append(base.Sources, Source{Title: strings.TrimSpace(strings.TrimPrefix(l, "# source:"))})
		case strings.HasPrefix(l, "## Q:"):
			if len(base.Sources) == 0 {
				return base, fmt.Errorf("line %d: a question before any source", line)
			}
			if len(own) > 0 && strings.TrimSpace(strings.Join(own, "")) != "" {
				parts = append(parts, strings.TrimSpace(strings.Join(own, "\n")))
				published = append(published, strings.TrimSpace(strings.Join(own, "\n")))
			}
			own = nil
			flushAnswer()
			base.Questions = append(base.Questions, Question{Text: strings.TrimSpace(strings.TrimPrefix(l, "## Q:")), Source: len(base.Sources) - 1})
			inQuestion = true
		case inQuestion:
			answer = append(answer, l)
		case len(base.Sources) > 0:
			own = append(own, l)
		}
	}
	if err := sc.Err(); err != nil {
		return base, err
	}
	if len(own) > 0 && strings.TrimSpace(strings.Join(own, "")) != "" {
		parts = append(parts, strings.TrimSpace(strings.Join(own, "\n")))
		published = append(published, strings.TrimSpace(strings.Join(own, "\n")))
	}
	flushSource()
	// A file without questions would be measured as recall 0 of 0 questions and pass
	// for a result: a file of another format, or a set not yet written.
	if len(base.Questions) == 0 {
		return base, fmt.Errorf("no question in it: a set's file holds \"# source: TITLE\" lines, each followed by \"## Q: QUESTION\" lines and their answers")
	}
	for i, q := range base.Questions {
		if q.Text == "" || q.Answer == "" {
			return base, fmt.Errorf("question %d (%q) has no text or no answer", i+1, q.Text)
		}
	}
	return base, nil
}
