package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// lifecycleDocs names the page that documents each command talking to a running server.
var lifecycleDocs = map[string]string{
	"chat": "conversations.md", "conversation": "conversations.md", "test": "testing-agents.md", "publish": "testing-agents.md",
	"plan": "agents-as-code.md", "apply": "agents-as-code.md", "pull": "agents-as-code.md",
	"calls analyze": "analysis.md", "calls backfill": "analysis.md", "calls export": "calls.md",
	"campaign": "campaigns.md", "suppressions": "campaigns.md", "jobs": "jobs.md", "kb eval": "knowledge-bases.md",
	"agent versions": "agents.md", "agent list": "agents.md", "number list": "numbers.md",
}

// TestDocsNameEveryFlag compares the commands' flags with their pages in docs/: each flag
// of a command is named on its page (--server and --token, common to them all, on
// docs/configuration.md; a shorthand such as `-f DIR` counts), and each --flag a synopsis in a code block gives a command is
// one that command has.
func TestDocsNameEveryFlag(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard)
	pages := map[string]string{}
	read := func(name string) string {
		if _, ok := pages[name]; !ok {
			b, err := os.ReadFile(filepath.Join("..", "docs", name))
			if err != nil {
				t.Fatal(err)
			}
			pages[name] = string(b)
		}
		return pages[name]
	}
	common := read("configuration.md")
	var walk func(cmd *cobra.Command)
	checked := 0
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		path := strings.TrimPrefix(cmd.CommandPath(), "voiceapi ")
		page := lifecycleDocs[path]
		if page == "" && cmd.HasParent() {
			page = lifecycleDocs[strings.TrimPrefix(cmd.Parent().CommandPath(), "voiceapi ")]
		}
		if page == "" || cmd.HasSubCommands() {
			return
		}
		checked++
		text := read(page)
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			doc := text
			if f.Name == "server" || f.Name == "token" {
				doc = common
			}
			short := f.Shorthand != "" && regexp.MustCompile("(^|[\\s`])-"+f.Shorthand+"[\\s`]").MatchString(doc)
			if f.Name != "help" && !strings.Contains(doc, "--"+f.Name) && !short {
				t.Errorf("voiceapi %s --%s is not named in docs/%s", path, f.Name, page)
			}
		})
	}
	walk(root)
	if checked < 20 {
		t.Errorf("checked %d commands: the walk missed some", checked)
	}

	synopsis := regexp.MustCompile(`^\$? *voiceapi ((?:[a-z]+ ?)+)(.*)$`)
	flag := regexp.MustCompile(`--[a-z][a-z-]*`)
	for _, page := range []string{"conversations.md", "testing-agents.md", "agents-as-code.md", "analysis.md", "calls.md", "campaigns.md", "jobs.md", "knowledge-bases.md"} {
		codeLines(read(page), func(at int, line string, _ bool) {
			m := synopsis.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				return
			}
			args, _, _ := strings.Cut(m[2], "&&") // the next command of a line is another's
			cmd, rest, err := root.Find(strings.Fields(m[1]))
			if err != nil || cmd == root {
				return
			}
			for _, f := range flag.FindAllString(strings.Join(rest, " ")+" "+args, -1) {
				if cmd.Flags().Lookup(strings.TrimPrefix(f, "--")) == nil {
					t.Errorf("docs/%s:%d: %s has no %s", page, at, cmd.CommandPath(), f)
				}
			}
		})
	}
}

// invocation is one `voiceapi …` a page's code block runs: the words after the program
// name up to the end of that shell command.
var invocation = regexp.MustCompile(`(?:(?:^|[;&|(]\s*|^\s*\$\s+|^\s*-\s+|sudo -u voiceapi\s+|\./|\bbin/)voiceapi|\bgo run \.)((?:\s+[^\s;&|()#]+)*)`)

// TestDocsCommandsExist runs over every code block (fenced or indented, at the top level
// or in a list item) of README.md and docs/*.md, and the files of deploy/ (their comments
// and ExecStart, the Dockerfile's CMD): each command line that starts the program
// (`voiceapi …`, `./voiceapi …`, `sudo -u voiceapi voiceapi …`, `/usr/local/bin/voiceapi
// …`, `go run . …`) names a command the binary has and only flags that command takes. An
// operator copies these lines; a renamed flag in the code left them failing with
// "unknown flag" and nothing in the build said so.
func TestDocsCommandsExist(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard)
	flagWord := regexp.MustCompile(`^--?([a-zA-Z][a-zA-Z-]*)`)
	checked := 0
	// check reads one line; shell says its first word must be a command (a shell block, a
	// comment's command), not perhaps a program's output ("voiceapi vs PocketBase").
	check := func(where, line string, shell bool) {
		if hash := strings.Index(line, " #"); hash >= 0 {
			line = line[:hash]
		}
		for _, m := range invocation.FindAllStringSubmatch(line, -1) {
			words := strings.Fields(m[1])
			if len(words) == 0 || strings.ContainsAny(words[0], `"'=:.{}`) {
				continue // a user, a unit or a name in prose or JSON, not the program
			}
			var path []string
			for _, w := range words {
				if strings.HasPrefix(w, "-") || strings.ToLower(w) != w || strings.ContainsAny(w, `"'$/.…_+0123456789`) {
					break
				}
				path = append(path, w)
			}
			cmd := root
			if len(path) > 0 {
				found, rest, err := root.Find(path)
				if err != nil || found == root || len(rest) > 0 && found.HasSubCommands() {
					if shell && len(path) == 1 && found == root {
						t.Errorf("%s: voiceapi has no command %q", where, words[0])
					}
					if found == root {
						continue
					}
				}
				cmd = found
			}
			checked++
			for _, w := range words[len(path):] {
				w = strings.Trim(w, "[]")
				f := flagWord.FindStringSubmatch(w)
				if f == nil {
					continue
				}
				var ok bool
				if strings.HasPrefix(w, "--") {
					ok = cmd.Flags().Lookup(f[1]) != nil || cmd.InheritedFlags().Lookup(f[1]) != nil || cmd == root && f[1] == "version"
				} else {
					ok = len(f[1]) == 1 && cmd.Flags().ShorthandLookup(f[1]) != nil
				}
				if !ok && f[1] != "help" {
					t.Errorf("%s: %s has no %s", where, cmd.CommandPath(), w)
				}
			}
		}
	}
	// joined gives each line with those it continues (a trailing backslash) appended.
	joined := func(lines []string, each func(at int, line string)) {
		for i := 0; i < len(lines); i++ {
			line, at := lines[i], i+1
			for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
				i++
				line = strings.TrimSuffix(line, "\\") + " " + strings.TrimLeft(strings.TrimSpace(lines[i]), "#")
			}
			each(at, line)
		}
	}

	pages, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range append(pages, filepath.Join("..", "README.md")) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		// Each code line with those it continues (a trailing backslash) appended.
		type codeLine struct {
			at, last int // its first line and last
			line     string
			shell    bool
		}
		var code []codeLine
		codeLines(string(raw), func(at int, line string, shell bool) {
			if n := len(code); n > 0 && code[n-1].last == at-1 && strings.HasSuffix(code[n-1].line, "\\") {
				code[n-1].line = strings.TrimSuffix(code[n-1].line, "\\") + " " + strings.TrimLeft(strings.TrimSpace(line), "#")
				code[n-1].last = at
				return
			}
			code = append(code, codeLine{at, at, line, shell})
		})
		for _, c := range code {
			check(fmt.Sprintf("%s:%d", filepath.Base(page), c.at), c.line, c.shell)
		}
	}

	deployed, err := filepath.Glob(filepath.Join("..", "deploy", "*"))
	if err != nil {
		t.Fatal(err)
	}
	cmdForm := regexp.MustCompile(`^CMD (\[.*\])$`)
	for _, file := range deployed {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		joined(strings.Split(string(raw), "\n"), func(at int, line string) {
			where := fmt.Sprintf("deploy/%s:%d", filepath.Base(file), at)
			if m := cmdForm.FindStringSubmatch(line); m != nil { // the Dockerfile's exec form
				var args []string
				if err := json.Unmarshal([]byte(m[1]), &args); err != nil {
					t.Errorf("%s: %v", where, err)
				}
				line = "voiceapi " + strings.Join(args, " ")
			}
			line = strings.TrimLeft(strings.TrimSpace(line), "#")
			check(where, strings.TrimSpace(line), true)
		})
	}
	if checked < 60 {
		t.Errorf("checked %d command lines: the scan missed some", checked)
	}
}

// TestFlagHelpShowsNoStrayArgument: pflag reads a `quoted` word of a flag's usage as the
// name of its argument, so `voiceapi serve --help` printed "--no-migrate voiceapi migrate",
// a switch shown as taking two words. A switch shows none, other flags one word.
func TestFlagHelpShowsNoStrayArgument(t *testing.T) {
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			if f.Value.Type() == "bool" && name != "" || strings.Contains(name, " ") {
				t.Errorf("%s --help shows --%s %s", cmd.CommandPath(), f.Name, name)
			}
		})
	}
	walk(NewRootCommand(io.Discard, io.Discard))
}

// TestDocsAdminCommandsTable compares docs/configuration.md's table of admin commands with
// the binary, both ways: every command that is neither serve nor a client of the API has a
// row, each row names a command there is, and its flags are the command's, no more, no
// fewer (--database-url and --db-pool-size, common to them all, are described above the
// table). `voiceapi migrate` had no row, and kb eval's --fusion and --published were left
// out of it.
func TestDocsAdminCommandsTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(raw), "| command | flags |")
	table, _, _ = strings.Cut(table, "\n\n")
	root := NewRootCommand(io.Discard, io.Discard)
	row := regexp.MustCompile("^\\| `voiceapi ([a-z -]+)`[^|]*\\|(.*)\\|$")
	flag := regexp.MustCompile(`--[a-z][a-z-]*`)
	rows := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		path := strings.TrimSpace(m[1])
		rows[path] = true
		cmd, rest, err := root.Find(strings.Fields(path))
		if err != nil || len(rest) > 0 || cmd == root {
			t.Errorf("configuration.md names voiceapi %s, which is no command", path)
			continue
		}
		named := map[string]bool{}
		for _, f := range flag.FindAllString(m[2], -1) {
			named[strings.TrimPrefix(f, "--")] = true
			if cmd.Flags().Lookup(strings.TrimPrefix(f, "--")) == nil {
				t.Errorf("configuration.md: voiceapi %s has no %s", path, f)
			}
		}
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !named[f.Name] && f.Name != "help" && f.Name != "database-url" && f.Name != "db-pool-size" {
				t.Errorf("configuration.md: the row of voiceapi %s does not name --%s", path, f.Name)
			}
		})
	}
	for _, cmd := range root.Commands() {
		for _, c := range append([]*cobra.Command{cmd}, cmd.Commands()...) {
			path := strings.TrimPrefix(c.CommandPath(), "voiceapi ")
			if c.HasSubCommands() || c.Hidden || path == "serve" || path == "help" || path == "completion" || strings.HasPrefix(path, "completion ") || rows[path] {
				continue
			}
			if lifecycleDocs[path] != "" || lifecycleDocs[strings.TrimPrefix(c.Parent().CommandPath(), "voiceapi ")] != "" {
				continue // a client of a running server's API: its own page and the table below
			}
			t.Errorf("configuration.md's admin table has no row for voiceapi %s", path)
		}
	}
	if len(rows) < 15 {
		t.Errorf("read %d rows: the table moved?", len(rows))
	}
}

// TestDocsServeDefaults compares each default in docs/configuration.md's table of serve
// flags with the flag's own: a default changed in the code and not on the page (or the
// other way) is what an operator sizing a deploy reads. Durations compare as durations
// (`2m` is 2m0s), "off" is false, an "*(empty…)*" cell is no value.
func TestDocsServeDefaults(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(raw), "## `voiceapi serve`")
	table, _, _ = strings.Cut(table, "### Environment only")
	cmd := NewServeCommand()
	row := regexp.MustCompile("^\\| `--([a-z-]+)[^|]*\\| `[A-Z_]+` \\| ([^|]*) \\|")
	checked := 0
	for _, line := range strings.Split(table, "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := cmd.Flags().Lookup(m[1])
		if f == nil {
			t.Errorf("configuration.md: serve has no --%s", m[1])
			continue
		}
		cell := strings.TrimSpace(m[2])
		var doc string
		switch {
		case strings.HasPrefix(cell, "*(empty"):
		case cell == "off":
			doc = "false"
		default:
			v := regexp.MustCompile("^`([^`]*)`").FindStringSubmatch(cell)
			if v == nil {
				t.Errorf("configuration.md: --%s: default cell %q not read", m[1], cell)
				continue
			}
			doc = v[1]
		}
		code := strings.Trim(f.DefValue, "[]")
		same := doc == code
		switch f.Value.Type() {
		case "duration":
			d1, err1 := time.ParseDuration(doc)
			d2, err2 := time.ParseDuration(code)
			same = err1 == nil && err2 == nil && d1 == d2
		case "durationSlice":
			a, b := strings.Split(doc, ","), strings.Split(code, ",")
			same = len(a) == len(b)
			for i := 0; same && i < len(a); i++ {
				d1, err1 := time.ParseDuration(a[i])
				d2, err2 := time.ParseDuration(b[i])
				same = err1 == nil && err2 == nil && d1 == d2
			}
		}
		if !same {
			t.Errorf("configuration.md: --%s defaults to %q, the flag to %q", m[1], doc, f.DefValue)
		}
		checked++
	}
	if checked < 30 {
		t.Errorf("checked %d rows: the table moved?", checked)
	}
}
