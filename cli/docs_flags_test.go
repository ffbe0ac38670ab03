package cli

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// lifecycleDocs names the page that documents each command talking to a running server.
var lifecycleDocs = map[string]string{
	"chat": "conversations.md", "test": "testing-agents.md", "publish": "testing-agents.md",
	"plan": "agents-as-code.md", "apply": "agents-as-code.md", "pull": "agents-as-code.md",
	"calls analyze": "analysis.md", "calls backfill": "analysis.md", "calls export": "calls.md",
	"campaign": "campaigns.md", "suppressions": "campaigns.md", "jobs": "jobs.md", "kb eval": "knowledge-bases.md",
	"agent versions": "agents.md",
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
		inCode := false
		for i, line := range strings.Split(read(page), "\n") {
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
				continue
			}
			m := synopsis.FindStringSubmatch(strings.TrimSpace(line))
			if !inCode || m == nil {
				continue
			}
			args, _, _ := strings.Cut(m[2], "&&") // the next command of a line is another's
			cmd, rest, err := root.Find(strings.Fields(m[1]))
			if err != nil || cmd == root {
				continue
			}
			for _, f := range flag.FindAllString(strings.Join(rest, " ")+" "+args, -1) {
				if cmd.Flags().Lookup(strings.TrimPrefix(f, "--")) == nil {
					t.Errorf("docs/%s:%d: %s has no %s", page, i+1, cmd.CommandPath(), f)
				}
			}
		}
	}
}
