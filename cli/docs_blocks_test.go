package cli

import (
	"regexp"
	"strings"
	"testing"
)

var (
	listItem = regexp.MustCompile(`^( *)([-*+]|\d{1,9}[.)])( +|$)`)
	fenceRe  = regexp.MustCompile("^ *(```+|~~~+)(.*)$")
)

// codeLines calls each for every line of a Markdown page's code blocks, fenced or
// indented (CommonMark's four spaces, after a blank line; inside a list item, four past
// its content's column), without the block's own indentation, with its line number and
// whether the block is a shell one (```sh, bash, yaml or ini, or an indented block: an
// unlabelled fence may hold a program's output, such as "voiceapi vs PocketBase").
// The docs checks read only fenced blocks, and reliability.md's indented commands
// (`    voiceapi check --data DIR`) went unchecked.
func codeLines(text string, each func(at int, line string, shell bool)) {
	var fence string // the open fence's marker, "" outside one
	fenceIndent := 0 // the open fence's indentation, taken off its lines
	shell := false   // the open fence is a shell block
	listCol := 0     // the content column of the list item the text is in, 0 outside
	blank, indented := true, false
	for i, line := range strings.Split(text, "\n") {
		line = strings.ReplaceAll(line, "\t", "    ")
		indent := len(line) - len(strings.TrimLeft(line, " "))
		isBlank := strings.TrimSpace(line) == ""
		if fence != "" {
			if m := fenceRe.FindStringSubmatch(line); m != nil && strings.HasPrefix(m[1], fence) && strings.TrimSpace(m[2]) == "" {
				fence = ""
			} else {
				each(i+1, line[min(indent, fenceIndent):], shell)
			}
			blank = false
			continue
		}
		if indented {
			if isBlank {
				continue
			}
			if indent >= listCol+4 {
				each(i+1, line[listCol+4:], true)
				continue
			}
			indented = false
		}
		if !isBlank && blank && indent >= listCol+4 {
			indented = true
			each(i+1, line[listCol+4:], true)
			continue
		}
		if isBlank {
			blank = true
			continue
		}
		if m := listItem.FindStringSubmatch(line); m != nil && indent < listCol+4 {
			listCol = len(m[0])
			if m[3] == "" || len(m[3]) > 4 { // an empty item, or one opening with indented code
				listCol = len(m[1]) + len(m[2]) + 1
			}
			line, indent = strings.Repeat(" ", listCol)+line[len(m[0]):], listCol
		} else if blank && indent < listCol {
			listCol = 0 // a paragraph after a blank line, outdented: the list has ended
		}
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			fence, fenceIndent = m[1], indent
			shell = regexp.MustCompile(`^(sh|bash|yaml|ini)$`).MatchString(strings.TrimSpace(m[2]))
		}
		blank = false
	}
}

// TestCodeLines: the page's code lines, fenced and indented, top level and in list items,
// are found with their blocks' indentation taken off; prose, a paragraph's indented
// continuation and list text are not.
func TestCodeLines(t *testing.T) {
	page := strings.Join([]string{
		"# Title",                        // 1
		"",                               // 2
		"    voiceapi check --data DIR",  // 3 indented, top level
		"",                               // 4
		"    voiceapi stats --data DIR",  // 5 the same block after a blank line
		"Prose with",                     // 6
		"    voiceapi continued prose",   // 7 a paragraph's continuation: not code
		"",                               // 8
		"```sh",                          // 9
		"voiceapi backup --data D",       // 10
		"```",                            // 11
		"",                               // 12
		"1. **Back up**:",                // 13
		"",                               // 14
		"   ```sh",                       // 15
		"   voiceapi backup --out X",     // 16 a fence in a list item
		"   ```",                         // 17
		"",                               // 18
		"   list text, not code",         // 19
		"",                               // 20
		"       voiceapi restore --in X", // 21 indented code in a list item
		"",                               // 22
		"```",                            // 23
		"voiceapi vs PocketBase",         // 24 an unlabelled fence: not shell
		"```",                            // 25
	}, "\n")
	type got struct {
		at    int
		line  string
		shell bool
	}
	var lines []got
	codeLines(page, func(at int, line string, shell bool) { lines = append(lines, got{at, line, shell}) })
	want := []got{
		{3, "voiceapi check --data DIR", true},
		{5, "voiceapi stats --data DIR", true},
		{10, "voiceapi backup --data D", true},
		{16, "voiceapi backup --out X", true},
		{21, "voiceapi restore --in X", true},
		{24, "voiceapi vs PocketBase", false},
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%v", len(lines), len(want), lines)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i, lines[i], want[i])
		}
	}
}
