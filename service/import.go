package service

// Import of a whole workspace document (conventions §17, docs/export-import.md): the
// document is checked whole first, every fault reported at once; the slow work (file
// detection, extraction, chunking, embedding) runs outside any transaction; the files are
// stored durably before the one transaction that creates every record, and discarded
// again if it fails. So an import is all or nothing, and bad input never changes anything.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/validate"
)

// defaultImportFileSize bounds one imported file when ImportOptions.MaxFileSize is 0: the
// default upload limit (conventions §15).
const defaultImportFileSize = 20 << 20

// importPlan is a checked document made ready to store.
type importPlan struct {
	ws       string
	kbs      []*data.KnowledgeBase // by position in the document, not yet stored
	kbByKey  map[string]string
	prepared [][]*preparedSource // by knowledge base
	secrets  []string            // new webhook secrets, in the clear (returned once)
	sealed   []string            // the same, sealed for storage
	missing  []string            // dot paths of masked api_keys imported as null
	// suppressions are the numbers of the document's suppression list in E.164, by row.
	suppressions []string
}

// ImportWorkspace implements data.WorkspaceExportService.
func (s *ExportService) ImportWorkspace(ctx context.Context, workspaceID string, doc *data.WorkspaceExport, opts data.ImportOptions) (*data.ImportResult, error) {
	if err := s.store.View(ctx, func(tx Tx) error {
		_, err := exportWorkspace(ctx, tx, workspaceID)
		return err
	}); err != nil {
		return nil, err
	}
	now := s.timeNow()
	plan := &importPlan{ws: workspaceID, kbByKey: map[string]string{}}
	for _, kb := range doc.KnowledgeBases {
		rec := &data.KnowledgeBase{ID: s.ids.New(data.PrefixKnowledgeBase), Name: kb.Name, WorkspaceID: workspaceID, CreatedAt: now, UpdatedAt: now}
		plan.kbs = append(plan.kbs, rec)
		if _, dup := plan.kbByKey[kb.Key]; !dup {
			plan.kbByKey[kb.Key] = rec.ID
		}
	}
	var errs validate.Errors
	validate.WorkspaceImport(doc, plan.kbByKey, s.catalog, &errs)
	plan.suppressions = validate.ImportSuppressions(doc.Suppressions, &errs)
	s.checkImportSettings(doc, &errs)
	files, kinds := s.checkImportFiles(doc, opts, &errs)
	if err := checkInput(ctx, errs.Err()); err != nil {
		return nil, err
	}
	// An imported webhook carries events as a created one does: the importer must be
	// allowed to read them all (a workspace:admin key alone is not).
	for _, in := range doc.Webhooks {
		if err := s.mayCarry(ctx, &data.Webhook{Events: in.Events}); err != nil {
			return nil, err
		}
	}

	for i, kb := range doc.KnowledgeBases {
		in := data.SourcesAdd{Texts: kb.Texts, URLs: kb.URLs, Files: files[i]}
		plan.prepared = append(plan.prepared, s.kb.prepareSources(ctx, plan.kbs[i], in, kinds[i]))
	}
	for range doc.Webhooks {
		secret, sealed, err := s.newWebhookSecret()
		if err != nil {
			return nil, err
		}
		plan.secrets, plan.sealed = append(plan.secrets, secret), append(plan.sealed, sealed)
	}
	if err := s.putImportFiles(ctx, plan); err != nil {
		return nil, err
	}
	var out *data.ImportResult
	err := s.store.Update(ctx, func(tx Tx) error {
		// The workspace was checked before the document's sources were prepared, which
		// takes seconds for large files: one deleted meanwhile must get none of it.
		if _, err := exportWorkspace(ctx, tx, workspaceID); err != nil {
			return err
		}
		var err error
		if out, err = s.importTx(ctx, tx, doc, plan); err != nil {
			return err
		}
		secrets := out.WebhookSecrets
		if secrets == nil {
			secrets = []data.ImportedSecret{}
		}
		answerClaim(ctx, out, map[string]any{"webhook_secrets": secrets})
		_, err = s.record(ctx, tx, data.EventWorkspaceImported, workspaceID, out)
		return err
	})
	if err != nil {
		s.discardImportFiles(ctx, plan) // the rows never committed: no file may outlive them
		return nil, err
	}
	return out, nil
}

// putImportFiles stores the files of every file source durably, before their rows; on a
// failure it discards those stored.
func (s *ExportService) putImportFiles(ctx context.Context, plan *importPlan) error {
	for i, prepared := range plan.prepared {
		kb := plan.kbs[i]
		for _, ps := range prepared {
			if ps.src.Type != data.SourceFiles {
				continue
			}
			if err := s.store.PutSourceFile(ctx, kb.WorkspaceID, kb.ID, ps.src.ID, bytes.NewReader(ps.content)); err != nil {
				s.discardImportFiles(ctx, plan)
				return fmt.Errorf("storing %s: %w", ps.src.Filename, err)
			}
		}
	}
	return nil
}

// discardImportFiles removes the files of the plan's file sources (absent ones are no
// error: a failed put may have stored only some).
func (s *ExportService) discardImportFiles(ctx context.Context, plan *importPlan) {
	for i, prepared := range plan.prepared {
		var ids []string
		for _, ps := range prepared {
			if ps.src.Type == data.SourceFiles {
				ids = append(ids, ps.src.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		if err := s.store.DiscardSourceFiles(context.WithoutCancel(ctx), plan.ws, plan.kbs[i].ID, ids); err != nil {
			s.log.Warn("removing the files of an import that was not stored", "knowledge_base_id", plan.kbs[i].ID, "error", err)
		}
	}
}

// checkImportFiles decodes every file, checks its size, digest and format into errs, and
// returns the files and their detected kinds by knowledge base. It also bounds the sources
// of each knowledge base, as an add of sources is bounded.
func (s *ExportService) checkImportFiles(doc *data.WorkspaceExport, opts data.ImportOptions, errs *validate.Errors) ([][]data.FileUpload, [][]knowledge.Kind) {
	maxSize := opts.MaxFileSize
	if maxSize <= 0 {
		maxSize = defaultImportFileSize
	}
	maxSources := s.opts.Knowledge.SourceLimit()
	files := make([][]data.FileUpload, len(doc.KnowledgeBases))
	kinds := make([][]knowledge.Kind, len(doc.KnowledgeBases))
	for i, kb := range doc.KnowledgeBases {
		kp := validate.Index("knowledge_bases", i)
		if n := len(kb.Texts) + len(kb.URLs) + len(kb.Files); n > maxSources {
			errs.Addf(kp, "The %s knowledge base has %d sources; a knowledge base holds at most %d.", kp, n, maxSources)
		}
		for j, f := range kb.Files {
			fp := validate.Index(kp+".files", j)
			if f.ContentBase64 == "" {
				continue // reported by validate
			}
			if base64.StdEncoding.DecodedLen(len(f.ContentBase64)) > int(maxSize)+3 {
				errs.Addf(fp+".content_base64", "The %s.content_base64 field holds more than %d bytes, the limit of one file.", fp, maxSize)
				continue
			}
			content, err := base64.StdEncoding.DecodeString(f.ContentBase64)
			switch {
			case err != nil:
				errs.Addf(fp+".content_base64", "The %s.content_base64 field must be standard, padded base64.", fp)
				continue
			case int64(len(content)) > maxSize:
				errs.Addf(fp+".content_base64", "The %s.content_base64 field holds more than %d bytes, the limit of one file.", fp, maxSize)
				continue
			case len(content) == 0:
				errs.Addf(fp+".content_base64", "The %s file is empty.", fp)
				continue
			case !errs.Has(fp+".sha256") && sha256Hex(content) != f.SHA256:
				errs.Addf(fp+".sha256", "The %s.sha256 field does not match the file's content: the document is damaged.", fp)
			}
			kind, err := knowledge.Detect(f.Filename, content)
			if err != nil {
				errs.Addf(fp, "The %s file (%s) is not accepted: %s.", fp, knowledge.SanitizeFilename(f.Filename), knowledge.Unsupported(err))
			}
			files[i] = append(files[i], data.FileUpload{Filename: f.Filename, Content: content})
			kinds[i] = append(kinds[i], kind)
		}
	}
	return files, kinds
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// takenNumbers refuses the import when any of its numbers is registered in any workspace,
// naming them all, before anything is written.
func takenNumbers(tx Tx, doc *data.WorkspaceExport) error {
	var taken []string
	for _, n := range doc.Numbers {
		ok, err := tx.PhoneNumberTaken(n.PhoneNumber)
		if err != nil {
			return err
		}
		if ok {
			taken = append(taken, n.PhoneNumber)
		}
	}
	switch {
	case len(taken) == 1:
		return data.Errorf(data.ECONFLICT, "The number %s is already registered; nothing was imported.", taken[0])
	case len(taken) > 1:
		return data.Errorf(data.ECONFLICT, "The numbers %s are already registered; nothing was imported.", strings.Join(taken, ", "))
	}
	return nil
}

// importTx creates every record of a checked document in tx: numbers are checked free
// across the instance and quotas respected as each record is created, and every create
// records its event as the normal create does.
func (s *ExportService) importTx(ctx context.Context, tx Tx, doc *data.WorkspaceExport, plan *importPlan) (*data.ImportResult, error) {
	ws := plan.ws
	plan.missing = nil // a shared commit may run this again
	res := &data.ImportResult{WorkspaceID: ws, Agents: []data.ImportedRecord{}, KnowledgeBases: []data.ImportedRecord{},
		Numbers: []data.ImportedNumber{}, Webhooks: []*data.Webhook{}, MissingSecrets: []string{}}
	if err := takenNumbers(tx, doc); err != nil {
		return nil, err
	}
	now := s.timeNow()
	if err := s.importWorkspaceSettings(ctx, tx, doc, plan, now); err != nil {
		return nil, err
	}
	if err := s.importPriceTable(ctx, tx, doc, ws); err != nil {
		return nil, err
	}
	for i, kb := range doc.KnowledgeBases {
		if err := s.importKnowledgeBase(ctx, tx, plan.kbs[i], plan.prepared[i]); err != nil {
			return nil, err
		}
		res.KnowledgeBases = append(res.KnowledgeBases, data.ImportedRecord{Key: kb.Key, ID: plan.kbs[i].ID, Name: kb.Name})
	}
	agentIDs := map[string]string{}
	for i := range doc.Agents {
		if err := checkQuota(tx, ws, data.LimitAgents); err != nil {
			return nil, err
		}
		id, err := s.importAgent(ctx, tx, &doc.Agents[i], validate.Index("agents", i), plan, now)
		if err != nil {
			return nil, err
		}
		agentIDs[doc.Agents[i].Key] = id
		res.Agents = append(res.Agents, data.ImportedRecord{Key: doc.Agents[i].Key, ID: id, Name: doc.Agents[i].Name})
	}
	res.MissingSecrets = append(res.MissingSecrets, plan.missing...)
	if err := s.importNumbers(ctx, tx, doc, ws, agentIDs, now, res); err != nil {
		return nil, err
	}
	for i, in := range doc.Webhooks {
		if err := checkQuota(tx, ws, data.LimitWebhooks); err != nil {
			return nil, err
		}
		w := &data.WebhookRecord{Webhook: data.Webhook{ID: s.ids.New(data.PrefixWebhook), WorkspaceID: ws, URL: in.URL,
			Description: in.Description, Events: in.Events, Enabled: in.Enabled, CreatedAt: now, UpdatedAt: now},
			SealedSecret: plan.sealed[i]}
		if err := tx.PutWebhook(w); err != nil {
			return nil, err
		}
		res.Webhooks = append(res.Webhooks, publicWebhook(w))
		res.WebhookSecrets = append(res.WebhookSecrets, data.ImportedSecret{WebhookID: w.ID, URL: w.URL, Secret: plan.secrets[i]})
	}
	var err error
	if res.Suppressions, err = s.importSuppressions(tx, doc, plan, now); err != nil {
		return nil, err
	}
	return res, nil
}

// importKnowledgeBase stores one knowledge base with its prepared sources and records its
// creation with the record, sources included, as a create does.
func (s *ExportService) importKnowledgeBase(ctx context.Context, tx Tx, kb *data.KnowledgeBase, prepared []*preparedSource) error {
	if err := checkQuota(tx, kb.WorkspaceID, data.LimitKnowledgeBases); err != nil {
		return err
	}
	if err := tx.InsertKnowledgeBase(kb); err != nil {
		return err
	}
	if err := s.kb.storeSources(ctx, tx, kb, prepared); err != nil {
		return err
	}
	rec := *kb
	if err := tx.KnowledgeBaseSources(&rec); err != nil {
		return err
	}
	_, err := s.record(ctx, tx, data.EventKnowledgeBaseCreated, kb.WorkspaceID, &rec)
	return err
}

// importNumbers registers the document's numbers, bound to the new agents by key.
func (s *ExportService) importNumbers(ctx context.Context, tx Tx, doc *data.WorkspaceExport, ws string, agentIDs map[string]string, now data.Time, res *data.ImportResult) error {
	bind := func(key *string) *string {
		if key == nil {
			return nil
		}
		id := agentIDs[*key]
		return &id
	}
	for _, in := range doc.Numbers {
		if err := checkQuota(tx, ws, data.LimitNumbers); err != nil {
			return err
		}
		n := &data.Number{ID: s.ids.New(data.PrefixNumber), WorkspaceID: ws, PhoneNumber: in.PhoneNumber,
			Nickname: in.Nickname, Provider: in.Provider, InboundAgentID: bind(in.InboundAgent),
			OutboundAgentID: bind(in.OutboundAgent), Variables: orEmptyVars(in.Variables), CreatedAt: now, UpdatedAt: now}
		ok, err := tx.InsertNumber(n)
		if err != nil {
			return err
		}
		if !ok { // takenNumbers saw it free in this transaction: the document repeats it
			return data.Errorf(data.ECONFLICT, "The number %s is already registered; nothing was imported.", n.PhoneNumber)
		}
		if _, err := s.record(ctx, tx, data.EventNumberCreated, ws, n); err != nil {
			return err
		}
		res.Numbers = append(res.Numbers, data.ImportedNumber{PhoneNumber: n.PhoneNumber, ID: n.ID})
	}
	return nil
}

// importWorkspaceSettings sets the target's privacy, simulation setting and embedding
// provider from the document's, each only when the document has it, and records the
// change as a workspace update does (workspace.updated). A simulation or embeddings
// api_key that came masked is imported as null and named in missing_secrets. A new
// embedding provider or model queues the embedding of the target's knowledge bases, as
// the update does; those the import creates are queued as they are stored.
func (s *ExportService) importWorkspaceSettings(ctx context.Context, tx Tx, doc *data.WorkspaceExport, plan *importPlan, now data.Time) error {
	p, sim := doc.Workspace.Privacy, doc.Workspace.Simulation
	if p == nil && sim == nil && doc.Workspace.Embeddings == nil {
		return nil
	}
	w, err := tx.Workspace(plan.ws)
	if err != nil {
		return err
	}
	if w == nil {
		return data.NotFound("Workspace")
	}
	if p != nil {
		w.Privacy = p.Normalized()
	}
	if sim != nil {
		m := *sim
		if m.APIKey != nil && data.IsMaskedSecret(*m.APIKey) {
			m.APIKey = nil
			plan.missing = append(plan.missing, "workspace.simulation.api_key")
		}
		if w.Simulation, err = s.mergeSimulation(nil, &m); err != nil {
			return err
		}
	}
	reembed, err := s.importEmbeddings(tx, w, doc, plan)
	if err != nil {
		return err
	}
	w.UpdatedAt = now
	if err := tx.PutWorkspace(w); err != nil {
		return err
	}
	if reembed {
		if err := s.enqueueWorkspaceEmbeds(tx, plan.ws); err != nil {
			return err
		}
	}
	out, err := s.publicWorkspace(w)
	if err != nil {
		return err
	}
	_, err = s.record(ctx, tx, data.EventWorkspaceUpdated, plan.ws, out)
	return err
}

// importAgent stores one agent with its versions, keeping their numbers, descriptions,
// snapshots and dates, and the agent's status and published_version. Versions record the
// importing user as their publisher: the original user ids mean nothing here.
func (s *ExportService) importAgent(ctx context.Context, tx Tx, in *data.ExportAgent, path string, plan *importPlan, now data.Time) (string, error) {
	publisher := ""
	if p := data.PrincipalFrom(ctx); p != nil {
		publisher = p.UserID
	}
	row := &data.StoredAgent{Agent: data.Agent{
		ID: s.ids.New(data.PrefixAgent), WorkspaceID: plan.ws, Name: in.Name, Status: in.Status, PublishedVersion: in.PublishedVersion,
		AgentConfig: plan.importConfig(in.AgentConfig, path), MaxConcurrentCalls: in.MaxConcurrentCalls, CreatedAt: now, UpdatedAt: now,
	}}
	if in.Privacy != nil {
		row.Privacy = in.Privacy.Normalized()
	}
	if in.PublishedVersion != nil {
		row.PublishedAt = &now // live on this instance since now
	}
	for j, v := range in.Versions {
		cfg, err := s.agents.sealed(plan.importConfig(v.AgentConfig, validate.Index(path+".versions", j)))
		if err != nil {
			return "", err
		}
		if err := tx.PutAgentVersion(&data.AgentVersion{AgentID: row.ID, VersionNumber: v.VersionNumber, Description: v.Description,
			Name: v.Name, AgentConfig: cfg, CreatedAt: v.CreatedAt, PublishedBy: publisher}); err != nil {
			return "", err
		}
		// Numbering goes on after the highest imported version, never reusing one.
		row.LastVersion = max(row.LastVersion, v.VersionNumber)
	}
	stored := *row
	cfg, err := s.agents.sealed(row.AgentConfig)
	if err != nil {
		return "", err
	}
	stored.AgentConfig = cfg
	if err := tx.PutAgent(&stored, ""); err != nil {
		return "", err
	}
	if _, err = s.record(ctx, tx, data.EventAgentCreated, plan.ws, masked(row)); err != nil {
		return "", err
	}
	for _, e := range in.Tests {
		t := e.AgentTest()
		t.ID, t.WorkspaceID, t.AgentID, t.CreatedAt, t.UpdatedAt = s.ids.New(data.PrefixAgentTest), plan.ws, row.ID, now, now
		if err := tx.PutAgentTest(&t); err != nil {
			return "", err
		}
		if _, err := s.record(ctx, tx, data.EventAgentTestCreated, plan.ws, &t); err != nil {
			return "", err
		}
	}
	return row.ID, nil
}

// importConfig maps knowledge base keys to the new ids and turns a masked api_key into
// null and a masked credential header's value into "", noting their paths: a mask is not a key, and storing it as one would fail every call.
func (plan *importPlan) importConfig(cfg data.AgentConfig, path string) data.AgentConfig {
	ids := make([]string, len(cfg.LLMConfig.KnowledgeBaseIDs))
	for i, key := range cfg.LLMConfig.KnowledgeBaseIDs {
		ids[i] = plan.kbByKey[key]
	}
	cfg.LLMConfig.KnowledgeBaseIDs = ids
	if k := cfg.LLMConfig.APIKey; k != nil && data.IsMaskedSecret(*k) {
		cfg.LLMConfig.APIKey = nil
		plan.missing = append(plan.missing, path+".llm_config.api_key")
	}
	// A masked credential header keeps its name with an empty value, to be entered again.
	var tools []*data.Tool
	for i, t := range cfg.LLMConfig.Tools {
		if t == nil {
			continue
		}
		for j, item := range t.CustomFunctionHeaders {
			name, value, _ := data.SplitHeader(item)
			if !data.IsCredentialHeader(item) || !data.IsMaskedSecret(value) {
				continue
			}
			if tools == nil {
				tools = slices.Clone(cfg.LLMConfig.Tools)
			}
			if tools[i] == t {
				c := *t
				c.CustomFunctionHeaders = slices.Clone(t.CustomFunctionHeaders)
				tools[i] = &c
			}
			tools[i].CustomFunctionHeaders[j] = name + ":"
			plan.missing = append(plan.missing, validate.Index(validate.Index(path+".llm_config.tools", i)+".custom_function_headers", j))
		}
	}
	if tools != nil {
		cfg.LLMConfig.Tools = tools
	}
	return cfg
}
