package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/client"
	"github.com/voiceapi/voiceapi/data"
)

// PullFile is the name of the state file pull writes.
const PullFile = "voiceapi.yaml"

// NewPullCommand is `voiceapi pull`: write the server's state as state files.
func NewPullCommand() *cobra.Command {
	var flags remoteFlags
	var dir string
	var force bool
	cmd := &cobra.Command{
		Use:   "pull",
		Short: "Write the server's agents (with their tests), knowledge bases, numbers and webhooks as state files",
		Long: "Writes " + PullFile + " (and the knowledge bases' files under files/) into --out, so that plan against " +
			"the same server then shows no changes. Credentials are never written: each agent's api_key becomes an " +
			"${env:NAME} reference, and pull lists the variables to set. See docs/agents-as-code.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := flags.client()
			if err != nil {
				return err
			}
			target := filepath.Join(dir, PullFile)
			if _, err := os.Stat(target); err == nil && !force {
				return fmt.Errorf("%s exists: pass --force to overwrite it", target)
			}
			cur, err := readCurrent(cmd.Context(), c, allKinds)
			if err == nil {
				err = cur.readAllTests(cmd.Context(), c)
			}
			if err != nil {
				return fmt.Errorf("reading the server's state: %w", err)
			}
			doc, envs, files, err := pullDocument(cur)
			if err != nil {
				return err
			}
			for rel, f := range files {
				b, _, err := c.KnowledgeBases.FileContent(cmd.Context(), f[0], f[1])
				if err != nil {
					return fmt.Errorf("downloading %s: %w", rel, err)
				}
				full := filepath.Join(dir, rel)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					return err
				}
				if err := writeReadableFileAtomically(full, true, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
					return err
				}
			}
			y, err := pullYAML(doc)
			if err != nil {
				return err
			}
			header := "# Written by voiceapi pull. Edit, then `voiceapi plan -f " + dir + "` and `voiceapi apply -f " + dir + "`.\n"
			if len(envs) > 0 {
				header += "# Credentials are environment references; set before plan and apply: " + strings.Join(envs, ", ") + "\n"
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			// Through a temporary file renamed over the last pull's: a failed write (a full
			// disk) keeps that file whole, and a file that appeared since without --force
			// is not overwritten.
			err = writeReadableFileAtomically(target, force, func(w io.Writer) error {
				_, err := io.WriteString(w, header)
				if err == nil {
					_, err = w.Write(y)
				}
				return err
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Wrote %s: %s, %s, %s, %s.\n", target, plural(len(cur.agentOrder), "agent"),
				plural(len(cur.kbOrder), "knowledge base"), plural(len(cur.numberOrder), "number"), plural(len(cur.webhookOrder), "webhook"))
			for _, e := range envs {
				fmt.Fprintf(out, "Set %s to the agent's API key before plan or apply.\n", e)
			}
			return nil
		},
	}
	flags.register(cmd.Flags())
	cmd.Flags().StringVarP(&dir, "out", "o", ".", "directory to write "+PullFile+" and files/ into")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing "+PullFile)
	consentFlag(cmd.Flags(), "force")
	return cmd
}

// pullDocument turns the server's state into a state file, the env variables its secrets
// name, and the files to download (relative path → knowledge base id, source id).
func pullDocument(cur *current) (map[string]any, []string, map[string][2]string, error) {
	var envs []string
	files := map[string][2]string{}
	var kbs, agents, numbers, hooks []any
	keyRefs := map[int]string{} // agent index → the variable its api_key names
	for _, name := range cur.kbOrder {
		if len(cur.kbs[name]) > 1 {
			return nil, nil, nil, fmt.Errorf("the server has %d knowledge bases named %q: rename all but one before pulling", len(cur.kbs[name]), name)
		}
		kb := cur.kbs[name][0].rec
		texts := []data.TextInput{}
		for _, t := range kb.Texts {
			texts = append(texts, data.TextInput{Title: t.Title, Content: t.Content})
		}
		urls := []string{}
		for _, u := range kb.URLs {
			urls = append(urls, u.URL)
		}
		paths := []string{}
		for _, f := range kb.Files {
			rel := filepath.ToSlash(filepath.Join("files", slug(kb.Name), filepath.Base(f.Filename)))
			if _, dup := files[rel]; dup {
				return nil, nil, nil, fmt.Errorf("knowledge base %q has two files named %q: pull cannot write both", kb.Name, f.Filename)
			}
			files[rel] = [2]string{kb.ID, f.ID}
			paths = append(paths, rel)
		}
		kbs = append(kbs, map[string]any{"name": kb.Name, "texts": texts, "urls": urls, "files": paths})
	}
	for _, name := range cur.agentOrder {
		if len(cur.agents[name]) > 1 {
			return nil, nil, nil, fmt.Errorf("the server has %d agents named %q: rename all but one before pulling", len(cur.agents[name]), name)
		}
		a := cur.agents[name][0].rec
		m, _ := toTree(a.AgentConfig).(map[string]any)
		llm, _ := m["llm_config"].(map[string]any)
		delete(llm, "knowledge_base_ids")
		if llm["api_key"] != nil {
			env := "VOICEAPI_" + strings.ToUpper(strings.ReplaceAll(slug(a.Name), "-", "_")) + "_API_KEY"
			for i := 2; slices.Contains(envs, env); i++ { // names that slug alike
				env = fmt.Sprintf("VOICEAPI_%s_%d_API_KEY", strings.ToUpper(strings.ReplaceAll(slug(a.Name), "-", "_")), i)
			}
			keyRefs[len(agents)] = env
			envs = append(envs, env)
		}
		names := []string{}
		for _, id := range a.LLMConfig.KnowledgeBaseIDs {
			names = append(names, cur.kbName[id])
		}
		tests := []any{}
		for _, t := range cur.tests[a.ID] {
			tests = append(tests, client.TestBody(*t))
		}
		m["name"], m["knowledge_bases"], m["tests"] = a.Name, names, tests
		agents = append(agents, m)
	}
	agentName := func(id *string) any {
		if id == nil {
			return nil
		}
		return cur.agentName[*id]
	}
	for _, key := range cur.numberOrder {
		n := cur.numbers[key].rec
		numbers = append(numbers, map[string]any{"phone_number": n.PhoneNumber, "nickname": n.Nickname, "provider": n.Provider,
			"inbound_agent": agentName(n.InboundAgentID), "outbound_agent": agentName(n.OutboundAgentID)})
	}
	for _, url := range cur.webhookOrder {
		if len(cur.webhooks[url]) > 1 {
			return nil, nil, nil, errors.New("the server has several webhooks for " + url + ": delete all but one before pulling")
		}
		w := cur.webhooks[url][0].rec
		hooks = append(hooks, map[string]any{"url": w.URL, "events": w.Events, "description": w.Description, "enabled": w.Enabled})
	}
	doc := map[string]any{}
	for k, v := range map[string][]any{"knowledge_bases": kbs, "agents": agents, "numbers": numbers, "webhooks": hooks} {
		if len(v) > 0 {
			doc[k] = v
		}
	}
	// Every text is the server's, so one that looks like a reference is escaped; then the
	// keys become the references plan reads.
	doc, _ = escapeTree(toTree(doc)).(map[string]any)
	for i, env := range keyRefs {
		llm := doc["agents"].([]any)[i].(map[string]any)["llm_config"].(map[string]any)
		llm["api_key"] = "${env:" + env + "}"
	}
	return doc, envs, files, nil
}

// escapeTree escapes every string of a JSON tree (escapeEnvRefs), in place.
func escapeTree(v any) any {
	switch t := v.(type) {
	case string:
		return escapeEnvRefs(t)
	case map[string]any:
		for k, it := range t {
			t[k] = escapeTree(it)
		}
	case []any:
		for i, it := range t {
			t[i] = escapeTree(it)
		}
	}
	return v
}

// pullYAML is the state file pull writes for doc (without its header comment): numbers
// as their text, every string read back as it is (writeYAML).
func pullYAML(doc map[string]any) ([]byte, error) { return writeYAML(doc) }

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug is a name as a file or variable name part: lower case letters, digits and dashes.
func slug(name string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if s == "" {
		s = "x"
	}
	return s
}
