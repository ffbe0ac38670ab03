package validate

import (
	"regexp"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/netguard"
)

// Bounds of an import document (docs/export-import.md). The body limit bounds its size;
// these bound what one document may hold, so that a single import stays one reasonable
// transaction.
const (
	// MaxImportItems bounds each list of the document (agents, knowledge bases, numbers,
	// webhooks); an agent's versions are bounded by MaxVersionsPerAgent.
	MaxImportItems = 10_000
	// MaxExportKey bounds an export-local key.
	MaxExportKey = 64
	// MaxFilename bounds a file source's filename.
	MaxFilename = 255
)

// ExportKeyPattern is the form of an export-local key: readable in a config-as-code file,
// safe in a dot path.
const ExportKeyPattern = `^[A-Za-z0-9][A-Za-z0-9_-]*$`

var keyRe = regexp.MustCompile(ExportKeyPattern)

// sha256Re is a lower-case hex SHA-256 digest.
var sha256Re = regexp.MustCompile(`^[0-9a-f]{64}$`)

// WorkspaceImport checks a whole import document and adds every fault to errs under its
// dot path (agents.2.llm_config.temperature). kbIDs maps each knowledge base key to the id
// the import will give it: agents name knowledge bases by key, and are checked as they
// will be stored. What needs storage (phone numbers free across the instance, quotas) or
// the file's bytes (base64, digest, format) is checked by the caller into the same errs.
func WorkspaceImport(doc *data.WorkspaceExport, kbIDs map[string]string, cat *data.Catalog, errs *Errors) {
	if doc.Format != data.ExportFormat {
		errs.Addf("format", "The format field must be %q.", data.ExportFormat)
	}
	if doc.Version != data.ExportVersion {
		errs.Addf("version", "The version field must be %d: this voiceapi reads version %d documents.", data.ExportVersion, data.ExportVersion)
	}
	if doc.Secrets != "" {
		errs.OneOf("secrets", doc.Secrets, data.ExportSecretsMasked, data.ExportSecretsIncluded)
	}
	errs.MaxLen("workspace.name", doc.Workspace.Name, MaxNameLen)
	errs.MaxLen("workspace.description", doc.Workspace.Description, MaxDescriptionLen)
	if doc.Workspace.Privacy != nil {
		StoredWorkspacePrivacy(errs, "workspace.privacy", *doc.Workspace.Privacy)
	}
	if doc.Workspace.Simulation != nil {
		SimulationModel(errs, "workspace.simulation", *doc.Workspace.Simulation, cat)
	}
	if doc.Workspace.PriceTable != nil {
		errs.Nest("workspace.price_table", PriceTable(*doc.Workspace.PriceTable))
	}

	for _, list := range []struct {
		path string
		n    int
	}{{"agents", len(doc.Agents)}, {"knowledge_bases", len(doc.KnowledgeBases)}, {"numbers", len(doc.Numbers)}, {"webhooks", len(doc.Webhooks)}} {
		errs.MaxItems(list.path, list.n, MaxImportItems)
	}

	kbKeys := make([]string, len(doc.KnowledgeBases))
	for i, kb := range doc.KnowledgeBases {
		kbKeys[i] = kb.Key
		importKnowledgeBase(kb, Index("knowledge_bases", i), errs)
	}
	exportKeys(errs, "knowledge_bases", kbKeys)

	agentKeys := map[string]bool{}
	keys := make([]string, len(doc.Agents))
	for i := range doc.Agents {
		keys[i] = doc.Agents[i].Key
		agentKeys[doc.Agents[i].Key] = true
		importAgent(&doc.Agents[i], Index("agents", i), kbIDs, cat, errs)
	}
	exportKeys(errs, "agents", keys)

	phones := make([]string, len(doc.Numbers))
	for i, n := range doc.Numbers {
		phones[i] = n.PhoneNumber
		p := Index("numbers", i)
		var inner Errors
		if err := NumberCreate(data.NumberCreate{PhoneNumber: n.PhoneNumber, Nickname: n.Nickname, Provider: n.Provider, Variables: n.Variables}); err != nil {
			inner.addError(err)
		}
		for _, ref := range []struct {
			member string
			key    *string
		}{{"inbound_agent", n.InboundAgent}, {"outbound_agent", n.OutboundAgent}} {
			if ref.key != nil && !agentKeys[*ref.key] {
				inner.Addf(ref.member, "The %s field must be the key of an agent of this document.", ref.member)
			}
		}
		errs.nest(p, &inner)
	}
	samePhones := Errors{}
	noDuplicates(&samePhones, "numbers", phones)
	for _, path := range samePhones.Paths() {
		errs.Addf(path+".phone_number", "The %s.phone_number field has a duplicate value: a number is registered once.", path)
	}

	for i, w := range doc.Webhooks {
		var inner Errors
		enabled := w.Enabled
		if err := WebhookCreate(data.WebhookCreate{URL: w.URL, Events: w.Events, Description: w.Description, Enabled: &enabled}, netguard.CheckURL); err != nil {
			inner.addError(err)
		}
		errs.nest(Index("webhooks", i), &inner)
	}
}

// importAgent checks one agent: its key, name and groups as create checks them, its status
// and published version, and each version's snapshot.
func importAgent(a *data.ExportAgent, path string, kbIDs map[string]string, cat *data.Catalog, errs *Errors) {
	var inner Errors
	keyForm(&inner, "key", a.Key)
	checkAgentSnapshot(a.Name, a.AgentConfig, kbIDs, cat, &inner)
	inner.OneOf("status", a.Status, data.AgentStatusDraft, data.AgentStatusPublished)
	if a.Privacy != nil {
		StoredAgentPrivacy(&inner, "privacy", *a.Privacy)
	}
	importTests(a, &inner)
	maxConcurrentCalls(&inner, a.MaxConcurrentCalls)
	inner.MaxItems("versions", len(a.Versions), MaxVersionsPerAgent)
	numbers := map[int]bool{}
	for j, v := range a.Versions {
		vp := Index("versions", j)
		var vErrs Errors
		if v.VersionNumber < 1 {
			vErrs.Add("version_number", "The version_number field must be at least 1.")
		} else if numbers[v.VersionNumber] {
			vErrs.Add("version_number", "The version_number field has a duplicate value: versions are numbered once.")
		}
		numbers[v.VersionNumber] = true
		ValidatePublish(v.Description, &vErrs)
		if v.CreatedAt.IsZero() {
			vErrs.Required("created_at")
		}
		checkAgentSnapshot(v.Name, v.AgentConfig, kbIDs, cat, &vErrs)
		inner.nest(vp, &vErrs)
	}
	switch {
	case a.PublishedVersion != nil && !numbers[*a.PublishedVersion]:
		inner.Add("published_version", "The published_version field must be the version_number of one of the agent's versions.")
	case a.PublishedVersion == nil && a.Status == data.AgentStatusPublished:
		inner.RequiredWhen("published_version", "status is published")
	}
	errs.nest(path, &inner)
}

// checkAgentSnapshot checks a name and configuration whose knowledge_base_ids hold keys:
// each key must name a knowledge base of the document, and the rest is checked with the
// keys resolved to the ids they will have.
func checkAgentSnapshot(name string, cfg data.AgentConfig, kbIDs map[string]string, cat *data.Catalog, errs *Errors) {
	resolved := make([]string, 0, len(cfg.LLMConfig.KnowledgeBaseIDs))
	for i, key := range cfg.LLMConfig.KnowledgeBaseIDs {
		if id, ok := kbIDs[key]; ok {
			resolved = append(resolved, id)
			continue
		}
		p := Index("llm_config.knowledge_base_ids", i)
		errs.Addf(p, "The selected %s is invalid: no knowledge base of this document has that key.", p)
	}
	a := &data.Agent{Name: name, AgentConfig: cfg}
	a.LLMConfig.KnowledgeBaseIDs = resolved
	if len(resolved) < len(cfg.LLMConfig.KnowledgeBaseIDs) {
		// Indexes shifted: only duplicates among the known keys remain worth reporting.
		noDuplicates(errs, "llm_config.knowledge_base_ids", cfg.LLMConfig.KnowledgeBaseIDs)
		a.LLMConfig.KnowledgeBaseIDs = nil
	}
	ValidateAgent(a, cat, errs)
}

// importKnowledgeBase checks a knowledge base's key, name, texts and urls, and the
// metadata of its files (their bytes are the caller's).
func importKnowledgeBase(kb data.ExportKnowledgeBase, path string, errs *Errors) {
	var inner Errors
	keyForm(&inner, "key", kb.Key)
	name(&inner, "name", kb.Name)
	sources(&inner, kb.Texts, kb.URLs, nil)
	for j, f := range kb.Files {
		fp := Index("files", j)
		inner.NotBlank(fp+".filename", f.Filename)
		inner.MaxLen(fp+".filename", f.Filename, MaxFilename)
		inner.Match(fp+".sha256", f.SHA256, sha256Re, "a lower-case hex SHA-256 digest")
		inner.MaxLen(fp+".content_type", f.ContentType, MaxIdentifier)
		if f.ContentBase64 == "" {
			inner.Required(fp + ".content_base64")
		}
	}
	errs.nest(path, &inner)
}

// keyForm checks an export-local key.
func keyForm(errs *Errors, path, key string) {
	if key == "" {
		errs.Required(path)
		return
	}
	errs.MaxLen(path, key, MaxExportKey)
	if !errs.Has(path) {
		errs.Match(path, key, keyRe, "letters, digits, _ and -, starting with a letter or digit")
	}
}

// exportKeys reports a key used twice in a list; the second use is the fault.
func exportKeys(errs *Errors, list string, keys []string) {
	seen := map[string]int{}
	for i, k := range keys {
		if k == "" {
			continue
		}
		if first, dup := seen[k]; dup {
			p := Index(list, i) + ".key"
			errs.Addf(p, "The %s field has a duplicate value: %s has the same key.", p, Index(list, first))
			continue
		}
		seen[k] = i
	}
}

// nest adds inner's faults under prefix: "name" becomes "agents.2.name", and a message
// naming the field names it by its full path.
func (e *Errors) nest(prefix string, inner *Errors) {
	for _, p := range inner.Paths() {
		full := Join(prefix, p)
		for _, m := range inner.Messages(p) {
			e.Add(full, strings.Replace(m, " "+p, " "+full, 1))
		}
	}
	e.Omit(inner.Omitted())
}

// addError adds the field faults of a validation_failed error (from a rule written for a
// single request body).
func (e *Errors) addError(err error) {
	de, ok := err.(*data.Error)
	if !ok {
		return
	}
	for _, p := range de.SortedFieldPaths() {
		for _, m := range de.Fields[p] {
			e.Add(p, m)
		}
	}
	e.Omit(de.Omitted())
}

// Nest adds the faults of err (a validation_failed error) under prefix, for checks made
// outside this package, such as a file's format.
func (e *Errors) Nest(prefix string, err error) {
	var inner Errors
	inner.addError(err)
	e.nest(prefix, &inner)
}

// importTests checks an agent's tests as a create would (with the tools of the agent's
// configuration), their names unique, at most MaxTestsPerAgent of them.
func importTests(a *data.ExportAgent, errs *Errors) {
	errs.MaxItems("tests", len(a.Tests), MaxTestsPerAgent)
	names := map[string]bool{}
	for i, e := range a.Tests {
		var tErrs Errors
		if err := AgentTest(e.AgentTest(), a.LLMConfig.Tools); err != nil {
			tErrs.addError(err)
		}
		if names[e.Name] && e.Name != "" {
			tErrs.Add("name", "The name field has a duplicate value: an agent's tests have names of their own.")
		}
		names[e.Name] = true
		errs.nest(Index("tests", i), &tErrs)
	}
}

// ImportSuppressions checks a document's suppression list by the rules of an import of the
// list (a number normalizable to E.164, a reason of at most MaxSuppressionReason
// characters), each fault under suppressions.<i>, and returns the numbers in E.164 by
// row. The list is bounded as a workspace's list is (MaxSuppressions), not as one import
// of the list is, so every list an export writes imports. An empty list is no fault here:
// the workspace had none.
func ImportSuppressions(rows []data.ExportSuppression, errs *Errors) []string {
	if len(rows) > MaxSuppressions {
		errs.MaxItems("suppressions", len(rows), MaxSuppressions)
		return nil
	}
	numbers := make([]string, len(rows))
	for i, r := range rows {
		var inner Errors
		e164, err := Suppressions([]data.SuppressionCreate{{PhoneNumber: r.PhoneNumber, Reason: r.Reason}}, "", true)
		inner.addError(err)
		numbers[i] = e164[0]
		errs.nest(Index("suppressions", i), &inner)
	}
	return numbers
}
