package data

import (
	"context"
	"io"
	"strings"
	"unicode/utf8"
)

// Export document identity: a reader checks both before trusting the rest.
const (
	ExportFormat  = "voiceapi.workspace"
	ExportVersion = 1
)

// How credentials travel in an export (WorkspaceExport.Secrets).
const (
	// ExportSecretsMasked: every api_key (the agents', workspace.simulation's and
	// workspace.embeddings') shows only its mask ("****" and its last 4 characters), so
	// the document can be committed to git as config-as-code.
	ExportSecretsMasked = "masked"
	// ExportSecretsIncluded: every api_key is in the clear, for a private move between
	// instances; the document must then be handled like the key file itself.
	ExportSecretsIncluded = "included"
)

// WorkspaceExport is a whole workspace as one JSON document (conventions §17): agents with
// their versions, knowledge bases with their sources, numbers, webhooks and the
// suppression list. It names no
// instance ids: agents and knowledge bases carry export-local keys, and every reference
// (an agent's knowledge_base_ids, a number's agents) uses them, so the document imports
// into any workspace of any instance. Webhook secrets are never part of it.
type WorkspaceExport struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	ExportedAt Time   `json:"exported_at"`
	// Secrets says how llm_config.api_key travels: ExportSecretsMasked or
	// ExportSecretsIncluded. Informative: a masked key is recognised by its form.
	Secrets        string                `json:"secrets"`
	Workspace      ExportWorkspace       `json:"workspace"`
	Agents         []ExportAgent         `json:"agents"`
	KnowledgeBases []ExportKnowledgeBase `json:"knowledge_bases"`
	Numbers        []ExportNumber        `json:"numbers"`
	Webhooks       []ExportWebhook       `json:"webhooks"`
	// Suppressions is the do-not-call list (conventions §25), oldest first; an import
	// adds its numbers to the target's list (absent: nothing added).
	Suppressions []ExportSuppression `json:"suppressions"`
}

// ExportWorkspace is the exported workspace's name and description; an import leaves the
// target workspace's own name and description as they are.
type ExportWorkspace struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Privacy is the workspace's retention and redaction; an import sets the target's
	// from it (a document without it leaves the target's as it is).
	Privacy *WorkspacePrivacy `json:"privacy"`
	// Simulation is the model of agent tests' simulated callers and judges, its api_key
	// masked or included as the document's secrets say; an import sets the target's from
	// it (absent: the target's stays).
	Simulation *SimulationModel `json:"simulation"`
	// Embeddings is the knowledge bases' embedding provider (all null: the operator's
	// default), its api_key masked or included as the document's secrets say; an import
	// sets the target's from it, and embeds the target's knowledge bases again when that
	// changes their vectors, as a workspace update does (absent: the target's stays).
	Embeddings *WorkspaceEmbeddings `json:"embeddings"`
	// PriceTable is the workspace's prices, as PUT /api/v1/price-table takes them (no
	// time); an import sets the target's from it as that route does, event included
	// (absent, as from a workspace that never set prices: the target's stays).
	PriceTable *PriceTableSet `json:"price_table"`
}

// ExportAgent is an agent with its versions. Key is unique among the document's agents;
// llm_config.knowledge_base_ids hold knowledge base keys, not ids.
type ExportAgent struct {
	Key              string `json:"key"`
	Name             string `json:"name"`
	Status           string `json:"status"`
	PublishedVersion *int   `json:"published_version"`
	AgentConfig
	// Privacy is the agent's retention and redaction (none when absent).
	Privacy  *AgentPrivacy        `json:"privacy"`
	Versions []ExportAgentVersion `json:"versions"`
	// MaxConcurrentCalls is the agent's bound on open calls (none when absent).
	MaxConcurrentCalls *int `json:"max_concurrent_calls"`
	// Tests are the agent's tests (conventions §22), oldest first; none when absent.
	Tests []ExportAgentTest `json:"tests"`
}

// ExportAgentTest is an agent's test without its ids and times: what a create writes.
type ExportAgentTest struct {
	Name               string              `json:"name"`
	User               TestUser            `json:"user"`
	Variables          map[string]any      `json:"variables"`
	MaxTurns           int                 `json:"max_turns"`
	Mocks              map[string]ToolMock `json:"mocks"`
	Criteria           []Criterion         `json:"criteria"`
	RequiredForPublish bool                `json:"required_for_publish"`
	Repeat             int                 `json:"repeat"`
}

// ExportTest is t as an export holds it.
func ExportTest(t *AgentTest) ExportAgentTest {
	return ExportAgentTest{Name: t.Name, User: t.User, Variables: t.Variables, MaxTurns: t.MaxTurns, Mocks: t.Mocks,
		Criteria: t.Criteria, RequiredForPublish: t.RequiredForPublish, Repeat: t.Repeat}
}

// AgentTest is the test an import creates from e (ids and times left to the importer).
func (e ExportAgentTest) AgentTest() AgentTest {
	return AgentTest{Name: e.Name, User: e.User, Variables: e.Variables, MaxTurns: e.MaxTurns, Mocks: e.Mocks,
		Criteria: e.Criteria, RequiredForPublish: e.RequiredForPublish, Repeat: e.Repeat}.Normalized()
}

// ExportAgentVersion is a published version: its number, description and snapshot, whose
// knowledge_base_ids hold knowledge base keys too.
type ExportAgentVersion struct {
	VersionNumber int     `json:"version_number"`
	Description   *string `json:"description"`
	Name          string  `json:"name"`
	AgentConfig
	CreatedAt Time `json:"created_at"`
}

// ExportKnowledgeBase is a knowledge base with its sources. Key is unique among the
// document's knowledge bases.
type ExportKnowledgeBase struct {
	Key   string       `json:"key"`
	Name  string       `json:"name"`
	Texts []TextInput  `json:"texts"`
	URLs  []string     `json:"urls"`
	Files []ExportFile `json:"files"`
}

// ExportFile is a file source with its original bytes, base64 (standard alphabet, padded).
// SHA256 is the hex digest of the bytes; an import refuses a file that does not match it.
type ExportFile struct {
	Filename      string `json:"filename"`
	ContentType   string `json:"content_type"`
	SHA256        string `json:"sha256"`
	ContentBase64 string `json:"content_base64"`
}

// ExportNumber is a phone number; its agents are named by agent key (null: unbound).
type ExportNumber struct {
	PhoneNumber   string  `json:"phone_number"`
	Nickname      string  `json:"nickname"`
	Provider      string  `json:"provider"`
	InboundAgent  *string `json:"inbound_agent"`
	OutboundAgent *string `json:"outbound_agent"`
	// Variables are the number's {{name}} values (none when absent).
	Variables map[string]any `json:"variables"`
}

// ExportSuppression is an entry of the suppression list without its id. CreatedAt is when
// the number was put on the list, which an import keeps (the record of when a person asked
// not to be called); a document written by hand may leave it out, and the import's time is
// used.
type ExportSuppression struct {
	PhoneNumber string  `json:"phone_number"`
	Reason      *string `json:"reason"`
	CreatedAt   Time    `json:"created_at"`
}

// ExportWebhook is a webhook without its signing secret: an import makes a new one.
type ExportWebhook struct {
	URL         string   `json:"url"`
	Description string   `json:"description"`
	Events      []string `json:"events"`
	Enabled     bool     `json:"enabled"`
}

// ExportOptions tune an export.
type ExportOptions struct {
	// IncludeSecrets exports every api_key in the clear instead of masked.
	IncludeSecrets bool
}

// ImportOptions tune an import.
type ImportOptions struct {
	// MaxFileSize bounds one file of a knowledge base, in bytes, as an upload is bounded;
	// 20 MiB when 0.
	MaxFileSize int64
}

// ImportResult tells what an import created: the new id of each keyed record, and the new
// signing secret of each webhook, shown this once.
type ImportResult struct {
	WorkspaceID    string           `json:"workspace_id"`
	Agents         []ImportedRecord `json:"agents"`
	KnowledgeBases []ImportedRecord `json:"knowledge_bases"`
	Numbers        []ImportedNumber `json:"numbers"`
	Webhooks       []*Webhook       `json:"webhooks"`
	// WebhookSecrets are the new secrets, in the order of Webhooks. The server moves them
	// out of the record, top-level, as a webhook create does (conventions §14).
	WebhookSecrets []ImportedSecret `json:"-"`
	// MissingSecrets lists the dot paths of api_keys that came masked and were imported as
	// null: set them again on the agents before relying on them.
	MissingSecrets []string `json:"missing_secrets"`
	// Suppressions counts the document's suppression list: its rows, those added, and the
	// duplicates (a number given twice, or already on the target's list, kept as it was).
	Suppressions SuppressionImport `json:"suppressions"`
}

// ImportedRecord maps an export-local key to the id the import gave the record.
type ImportedRecord struct {
	Key  string `json:"key"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ImportedNumber is a number the import registered.
type ImportedNumber struct {
	PhoneNumber string `json:"phone_number"`
	ID          string `json:"id"`
}

// ImportedSecret is the new signing secret of an imported webhook.
type ImportedSecret struct {
	WebhookID string `json:"webhook_id"`
	URL       string `json:"url"`
	Secret    string `json:"secret"`
}

// ExportStream is an export read from storage and ready to be written: its records are
// copied out and its files opened, so writing needs no transaction. Close releases the
// files whether or not WriteTo ran.
type ExportStream interface {
	io.WriterTo
	io.Closer
	// Counts tells how many records of each kind the document holds.
	Counts() ExportCounts
}

// ExportCounts are how many records of each kind an export holds: the data of its
// workspace.exported event, which names no record and carries no secret.
type ExportCounts struct {
	Agents         int `json:"agents"`
	AgentVersions  int `json:"agent_versions"`
	AgentTests     int `json:"agent_tests"`
	KnowledgeBases int `json:"knowledge_bases"`
	Texts          int `json:"texts"`
	URLs           int `json:"urls"`
	Files          int `json:"files"`
	Numbers        int `json:"numbers"`
	Webhooks       int `json:"webhooks"`
	Suppressions   int `json:"suppressions"`
}

// Counts counts the records of doc.
func (doc *WorkspaceExport) Counts() ExportCounts {
	c := ExportCounts{Agents: len(doc.Agents), KnowledgeBases: len(doc.KnowledgeBases),
		Numbers: len(doc.Numbers), Webhooks: len(doc.Webhooks), Suppressions: len(doc.Suppressions)}
	for _, a := range doc.Agents {
		c.AgentVersions += len(a.Versions)
		c.AgentTests += len(a.Tests)
	}
	for _, kb := range doc.KnowledgeBases {
		c.Texts += len(kb.Texts)
		c.URLs += len(kb.URLs)
		c.Files += len(kb.Files)
	}
	return c
}

// WorkspaceExportService exports and imports whole workspaces. With a principal in ctx,
// workspaceID must be the workspace the principal acts in (else not_found); without one
// (the CLI on a stopped server's data), any existing workspace.
type WorkspaceExportService interface {
	// ExportWorkspace reads the workspace for export. Errors: not_found.
	ExportWorkspace(ctx context.Context, workspaceID string, opts ExportOptions) (ExportStream, error)
	// ImportWorkspace creates everything doc describes in the workspace, all or nothing.
	// Errors: not_found, validation_failed (every fault of the document at once),
	// conflict (a phone number registered anywhere), quota_exceeded, forbidden (a webhook
	// carrying events the caller may not read).
	ImportWorkspace(ctx context.Context, workspaceID string, doc *WorkspaceExport, opts ImportOptions) (*ImportResult, error)
}

// IsMaskedSecret reports whether s has the form MaskSecret gives a secret: "****" and at
// most 4 more characters. An import takes such a value for a mask, not a key.
func IsMaskedSecret(s string) bool {
	rest, ok := strings.CutPrefix(s, "****")
	return ok && utf8.RuneCountInString(rest) <= 4
}
