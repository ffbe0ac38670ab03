package validate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/voiceapi/voiceapi/data"
)

// importDoc is a valid import document of one workspace, change applied.
func importDoc(change func(doc *data.WorkspaceExport)) error {
	doc := &data.WorkspaceExport{Format: data.ExportFormat, Version: data.ExportVersion, Workspace: data.ExportWorkspace{Name: "Acme"}}
	change(doc)
	kbIDs := map[string]string{}
	for i, kb := range doc.KnowledgeBases {
		kbIDs[kb.Key] = fmt.Sprintf("%s01JD6%021d", data.PrefixKnowledgeBase, i)
	}
	return errsOf(func(errs *Errors) { WorkspaceImport(doc, kbIDs, testCatalog, errs) })
}

// importAgentOf is a valid draft agent of the document under key.
func importAgentOf(key string) data.ExportAgent {
	return data.ExportAgent{Key: key, Name: "Support", Status: data.AgentStatusDraft, AgentConfig: data.DefaultAgentConfig()}
}

// importKBs is n knowledge bases with keys of their own.
func importKBs(n int) []data.ExportKnowledgeBase {
	out := make([]data.ExportKnowledgeBase, n)
	for i := range out {
		out[i] = data.ExportKnowledgeBase{Key: fmt.Sprint("kb", i), Name: "FAQ"}
	}
	return out
}

// importNumbers is n distinct numbers.
func importNumbers(n int) []data.ExportNumber {
	out := make([]data.ExportNumber, n)
	for i := range out {
		out[i] = data.ExportNumber{PhoneNumber: fmt.Sprintf("+1415%07d", i), Provider: data.NumberProviders[0]}
	}
	return out
}

// importTestsOf is n tests with names of their own.
func importTestsOf(n int) []data.ExportAgentTest {
	out := make([]data.ExportAgentTest, n)
	for i := range out {
		out[i] = data.ExportAgentTest{Name: fmt.Sprint("test ", i), User: data.TestUser{Script: []string{"Hello"}},
			MaxTurns: data.DefaultTestMaxTurns, Repeat: data.DefaultTestRepeat,
			Criteria: []data.Criterion{{Type: data.CriterionSays, Pattern: "Welcome"}}}
	}
	return out
}

// fileOf is a file source named name.
func fileOf(name string) data.ExportFile {
	return data.ExportFile{Filename: name, ContentType: "text/plain", SHA256: strings.Repeat("0", 64), ContentBase64: "aGk="}
}

func TestImportBounds(t *testing.T) {
	checkBounds(t, []bound{
		{"MaxNameLen workspace", "workspace.name", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) { d.Workspace.Name = chars(upTo(MaxNameLen, past)) })
		}},
		{"MaxDescriptionLen workspace", "workspace.description", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) { d.Workspace.Description = chars(upTo(MaxDescriptionLen, past)) })
		}},
		{"MaxImportItems knowledge bases", "knowledge_bases", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) { d.KnowledgeBases = importKBs(upTo(MaxImportItems, past)) })
		}},
		{"MaxImportItems numbers", "numbers", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) { d.Numbers = importNumbers(upTo(MaxImportItems, past)) })
		}},
		{"MaxImportItems webhooks", "webhooks", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) {
				d.Webhooks = make([]data.ExportWebhook, upTo(MaxImportItems, past))
				for i := range d.Webhooks {
					d.Webhooks[i] = data.ExportWebhook{URL: "https://example.com/hook", Events: []string{data.WebhookAllEvents}}
				}
			})
		}},
		{"MaxExportKey knowledge base", "knowledge_bases.0.key", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) {
				d.KnowledgeBases = importKBs(1)
				d.KnowledgeBases[0].Key = strings.Repeat("k", upTo(MaxExportKey, past)) // ASCII by its form
			})
		}},
		{"MaxExportKey agent", "agents.0.key", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) {
				d.Agents = []data.ExportAgent{importAgentOf(strings.Repeat("a", upTo(MaxExportKey, past)))}
			})
		}},
		{"MaxFilename", "knowledge_bases.0.files.0.filename", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) {
				d.KnowledgeBases = importKBs(1)
				d.KnowledgeBases[0].Files = []data.ExportFile{fileOf(chars(upTo(MaxFilename, past)))}
			})
		}},
		{"MaxSourceTitle", "knowledge_bases.0.texts.0.title", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) {
				d.KnowledgeBases = importKBs(1)
				d.KnowledgeBases[0].Texts = []data.TextInput{{Title: chars(upTo(MaxSourceTitle, past)), Content: "We open at nine."}}
			})
		}},
		{"MaxTestsPerAgent", "agents.0.tests", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) {
				a := importAgentOf("support")
				a.Tests = importTestsOf(upTo(MaxTestsPerAgent, past))
				d.Agents = []data.ExportAgent{a}
			})
		}},
		{"MaxConcurrentCalls", "agents.0.max_concurrent_calls", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) {
				a := importAgentOf("support")
				a.MaxConcurrentCalls = ptr(upTo(MaxConcurrentCalls, past))
				d.Agents = []data.ExportAgent{a}
			})
		}},
		{"MaxNicknameLen", "numbers.0.nickname", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) {
				d.Numbers = importNumbers(1)
				d.Numbers[0].Nickname = chars(upTo(MaxNicknameLen, past))
			})
		}},
		{"MaxWebhookURLLen", "webhooks.0.url", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) {
				d.Webhooks = []data.ExportWebhook{{URL: webhookURLOf(upTo(MaxWebhookURLLen, past)), Events: []string{data.WebhookAllEvents}}}
			})
		}},
	})
}

// TestImportAgentListBounds: the agents of a document are bounded as the other lists are,
// the versions of one agent as a publish is (MaxVersionsPerAgent), each agent and version
// checked as a create would.
func TestImportAgentListBounds(t *testing.T) {
	checkBounds(t, []bound{
		{"MaxImportItems agents", "agents", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) {
				d.Agents = make([]data.ExportAgent, upTo(MaxImportItems, past))
				for i := range d.Agents {
					d.Agents[i] = importAgentOf(fmt.Sprint("a", i))
				}
			})
		}},
		{"MaxVersionsPerAgent versions", "agents.0.versions", func(past bool) error {
			return importDoc(func(d *data.WorkspaceExport) {
				a := importAgentOf("support")
				a.Versions = make([]data.ExportAgentVersion, upTo(MaxVersionsPerAgent, past))
				for i := range a.Versions {
					a.Versions[i] = data.ExportAgentVersion{VersionNumber: i + 1, Name: "Support", AgentConfig: a.AgentConfig, CreatedAt: data.Time{Time: testNow}}
				}
				d.Agents = []data.ExportAgent{a}
			})
		}},
	})
}
