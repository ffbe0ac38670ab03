package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/voiceapi/voiceapi/data"
)

// pulledState is a server's state of one knowledge base, agent, number and webhook whose
// free texts are the fuzzer's.
func pulledState(name, text, prompt, desc string) *current {
	kb := &data.KnowledgeBase{ID: "kb_1", Name: name, Texts: []data.TextSource{{Title: name, Content: text}},
		URLs: []data.URLSource{{URL: "https://example.com/" + desc}}}
	a := &data.Agent{ID: "agt_1", Name: name}
	a.PromptConfig = data.PromptConfig{Prompt: prompt, WelcomeMessage: text}
	a.LLMConfig.KnowledgeBaseIDs = []string{kb.ID}
	n := &data.Number{PhoneNumber: "+14155550199", Nickname: desc, Provider: data.ProviderSIP, InboundAgentID: &a.ID}
	w := &data.Webhook{URL: "https://example.com/h", Description: desc, Events: []string{"*"}, Enabled: true}
	return &current{
		agents: map[string][]*remote[data.Agent]{name: {{rec: a}}}, kbs: map[string][]*remote[data.KnowledgeBase]{name: {{rec: kb}}},
		numbers: map[string]*remote[data.Number]{n.PhoneNumber: {rec: n}}, webhooks: map[string][]*remote[data.Webhook]{w.URL: {{rec: w}}},
		agentName: map[string]string{a.ID: name}, kbName: map[string]string{kb.ID: name},
		agentOrder: []string{name}, kbOrder: []string{name}, numberOrder: []string{n.PhoneNumber}, webhookOrder: []string{w.URL},
		tests: map[string][]*data.AgentTest{},
	}
}

// FuzzPullReadsBack: what pull writes, read back as a state file (loadDesired, what plan
// and apply read), declares exactly the texts the server holds, whatever they are: names,
// prompts, knowledge base texts, nicknames and descriptions come back unchanged, so a plan
// right after a pull is empty (TestPullThenPlanIsEmpty does it against a real server for
// one state). Strings the server would refuse (not UTF-8, empty names) are not asked.
func FuzzPullReadsBack(f *testing.F) {
	f.Add("Docs", "Alpha text.", "You are a helpful agent.", "all")
	f.Add("Sales Bot", "yes", "null", "~")
	f.Add("a: b", "- item\n- other", "{{customer_name}} owes $5", "#comment")
	f.Add("x", "costs ${env:HOME} or $${env:HOME}", "${env:VOICEAPI_UNSET_X}", "${x}")
	f.Add("0x10", "1e3", "'quoted' \"double\"", "\t tab \r\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, name, text, prompt, desc string) {
		if name == "" || !utf8.ValidString(name) || !utf8.ValidString(text) || !utf8.ValidString(prompt) || !utf8.ValidString(desc) {
			return
		}
		doc, _, _, err := pullDocument(pulledState(name, text, prompt, desc))
		if err != nil {
			t.Fatal(err)
		}
		y, err := pullYAML(doc)
		if err != nil {
			t.Fatalf("pull cannot write %+v: %v", doc, err)
		}
		file := filepath.Join(dir, PullFile)
		if err := os.WriteFile(file, y, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := loadDesired(file)
		if err != nil {
			t.Fatalf("the pulled file does not read back: %v\n%s", err, y)
		}
		if len(d.kbs) != 1 || len(d.agents) != 1 || len(d.numbers) != 1 || len(d.webhooks) != 1 {
			t.Fatalf("read back %d kbs, %d agents, %d numbers, %d webhooks\n%s", len(d.kbs), len(d.agents), len(d.numbers), len(d.webhooks), y)
		}
		kb, a, n, w := d.kbs[0], d.agents[0], d.numbers[0], d.webhooks[0]
		welcome, ok := a.Groups["prompt_config"]["welcome_message"]
		if !ok {
			welcome = "" // omitted when empty
		}
		got := []any{kb.Name, kb.Texts, kb.URLs, a.Name, a.Groups["prompt_config"]["prompt"], welcome,
			a.KnowledgeBases, n.Nickname, *n.InboundAgent, w.Description}
		want := []any{name, []data.TextInput{{Title: name, Content: text}}, []string{"https://example.com/" + desc}, name, prompt, text,
			[]string{name}, desc, name, desc}
		if !reflect.DeepEqual(got, want) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			t.Fatalf("read back %s, want %s\n%s", gj, wj, y)
		}
	})
}
