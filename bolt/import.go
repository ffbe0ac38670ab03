package bolt

// Import of a whole workspace document (conventions §17, docs/export-import.md): the
// document is checked whole first, every fault reported at once; the slow work (file
// detection, extraction, chunking, embedding) runs outside any transaction; the files go
// to disk, fsynced, before the one transaction that creates every record, and are removed
// again if it fails. So an import is all or nothing, and bad input never changes anything.

import (
	"context"
	"encoding/base64"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/validate"
)

// defaultImportFileSize bounds one imported file when ImportOptions.MaxFileSize is 0: the
// default upload limit (conventions §15).
const defaultImportFileSize = 20 << 20

// importPlan is a checked document made ready to store.
type importPlan struct {
	ws       string
	kbIDs    []string // by position in the document
	kbByKey  map[string]string
	prepared [][]*preparedSource // by knowledge base
	secrets  []string            // new webhook secrets, in the clear (returned once)
	sealed   []string            // the same, sealed for storage
	missing  []string            // dot paths of masked api_keys imported as null
}

// ImportWorkspace implements data.WorkspaceExportService.
func (db *DB) ImportWorkspace(ctx context.Context, workspaceID string, doc *data.WorkspaceExport, opts data.ImportOptions) (*data.ImportResult, error) {
	return db.ImportWorkspaceThen(ctx, workspaceID, doc, opts, nil)
}

// ImportWorkspaceThen is ImportWorkspace running then (when not nil) in the import's one
// write transaction, after every record is written: the service layer records the
// import's event there, so the records and their event commit together or not at all.
// Like any function of a shared commit, then may run more than once.
func (db *DB) ImportWorkspaceThen(ctx context.Context, workspaceID string, doc *data.WorkspaceExport, opts data.ImportOptions,
	then func(service.Tx, *data.ImportResult) error) (*data.ImportResult, error) {
	if err := db.view(func(tx *bbolt.Tx) error {
		_, err := exportWorkspaceID(ctx, tx, workspaceID)
		return err
	}); err != nil {
		return nil, err
	}
	plan := &importPlan{ws: workspaceID, kbByKey: map[string]string{}}
	for _, kb := range doc.KnowledgeBases {
		id := db.ids.New(data.PrefixKnowledgeBase)
		plan.kbIDs = append(plan.kbIDs, id)
		if _, dup := plan.kbByKey[kb.Key]; !dup {
			plan.kbByKey[kb.Key] = id
		}
	}
	var errs validate.Errors
	validate.WorkspaceImport(doc, plan.kbByKey, db.opts.Catalog, &errs)
	files, kinds := db.checkImportFiles(doc, opts, &errs)
	if err := errs.Err(); err != nil {
		return nil, err
	}

	for i, kb := range doc.KnowledgeBases {
		in := data.SourcesAdd{Texts: kb.Texts, URLs: kb.URLs, Files: files[i]}
		plan.prepared = append(plan.prepared, db.prepareSources(ctx, workspaceID, plan.kbIDs[i], in, kinds[i]))
	}
	for range doc.Webhooks {
		secret, sealed, err := db.newWebhookSecret()
		if err != nil {
			return nil, err
		}
		plan.secrets, plan.sealed = append(plan.secrets, secret), append(plan.sealed, sealed)
	}
	removeAll := func() {
		for _, id := range plan.kbIDs {
			db.removeKBFiles(workspaceID, id) // new ids: their directories hold only this import's files
		}
	}
	for i, prepared := range plan.prepared {
		if _, err := db.writeSourceFiles(workspaceID, plan.kbIDs[i], prepared); err != nil {
			removeAll()
			return nil, err
		}
	}
	var out *data.ImportResult
	err := db.update(func(btx *bbolt.Tx) error {
		var err error
		out, err = db.importTx(ctx, btx, doc, plan)
		if err == nil && then != nil {
			err = then(tx{db: db, b: btx}, out)
		}
		return err
	})
	if err != nil {
		removeAll() // the rows never committed: no file may outlive them
		return nil, err
	}
	return out, nil
}

// checkImportFiles decodes every file, checks its size, digest and format into errs, and
// returns the files and their detected kinds by knowledge base. It also bounds the sources
// of each knowledge base, as an add of sources is bounded.
func (db *DB) checkImportFiles(doc *data.WorkspaceExport, opts data.ImportOptions, errs *validate.Errors) ([][]data.FileUpload, [][]knowledge.Kind) {
	maxSize := opts.MaxFileSize
	if maxSize <= 0 {
		maxSize = defaultImportFileSize
	}
	files := make([][]data.FileUpload, len(doc.KnowledgeBases))
	kinds := make([][]knowledge.Kind, len(doc.KnowledgeBases))
	for i, kb := range doc.KnowledgeBases {
		kp := validate.Index("knowledge_bases", i)
		if n := len(kb.Texts) + len(kb.URLs) + len(kb.Files); n > db.maxSources() {
			errs.Addf(kp, "The %s knowledge base has %d sources; a knowledge base holds at most %d.", kp, n, db.maxSources())
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
				errs.Addf(fp, "The %s file (%s) is not accepted: %s.", fp, knowledge.SanitizeFilename(f.Filename),
					strings.TrimPrefix(err.Error(), knowledge.ErrUnsupported.Error()+": "))
			}
			files[i] = append(files[i], data.FileUpload{Filename: f.Filename, Content: content})
			kinds[i] = append(kinds[i], kind)
		}
	}
	return files, kinds
}

// importTx creates every record of a checked document in tx: numbers are checked free
// across the instance and quotas respected as each record is created, and every create
// records its event as the normal create does.
func (db *DB) importTx(ctx context.Context, tx *bbolt.Tx, doc *data.WorkspaceExport, plan *importPlan) (*data.ImportResult, error) {
	ws := plan.ws
	plan.missing = nil // a batched transaction may run again
	res := &data.ImportResult{WorkspaceID: ws, Agents: []data.ImportedRecord{}, KnowledgeBases: []data.ImportedRecord{},
		Numbers: []data.ImportedNumber{}, Webhooks: []*data.Webhook{}, MissingSecrets: []string{}}
	var taken []string
	phones := tx.Bucket(bucketNumbersByPhone)
	for _, n := range doc.Numbers {
		if phones.Get([]byte(n.PhoneNumber)) != nil {
			taken = append(taken, n.PhoneNumber)
		}
	}
	switch {
	case len(taken) == 1:
		return nil, data.Errorf(data.ECONFLICT, "The number %s is already registered; nothing was imported.", taken[0])
	case len(taken) > 1:
		return nil, data.Errorf(data.ECONFLICT, "The numbers %s are already registered; nothing was imported.", strings.Join(taken, ", "))
	}
	now := db.timeNow()

	for i, kb := range doc.KnowledgeBases {
		if err := db.checkQuota(tx, ws, quotaKnowledgeBases); err != nil {
			return nil, err
		}
		row := &kbRow{ID: plan.kbIDs[i], Name: kb.Name, WorkspaceID: ws, CreatedAt: now, UpdatedAt: now}
		if err := putJSON(tx.Bucket(bucketKnowledgeBase), []byte(row.ID), row); err != nil {
			return nil, err
		}
		if err := indexPut(tx.Bucket(bucketKBByWS), ws, row.ID); err != nil {
			return nil, err
		}
		if err := db.storeSources(ctx, tx, row, plan.prepared[i]); err != nil {
			return nil, err
		}
		rec, err := kbRecord(tx, row)
		if err != nil {
			return nil, err
		}
		if _, err := db.recordEvent(ctx, tx, data.EventKnowledgeBaseCreated, ws, rec); err != nil {
			return nil, err
		}
		res.KnowledgeBases = append(res.KnowledgeBases, data.ImportedRecord{Key: kb.Key, ID: row.ID, Name: kb.Name})
	}

	agentIDs := map[string]string{}
	for i := range doc.Agents {
		if err := db.checkQuota(tx, ws, quotaAgents); err != nil {
			return nil, err
		}
		id, err := db.importAgent(ctx, tx, &doc.Agents[i], validate.Index("agents", i), plan, now)
		if err != nil {
			return nil, err
		}
		agentIDs[doc.Agents[i].Key] = id
		res.Agents = append(res.Agents, data.ImportedRecord{Key: doc.Agents[i].Key, ID: id, Name: doc.Agents[i].Name})
	}
	res.MissingSecrets = append(res.MissingSecrets, plan.missing...)

	bind := func(key *string) *string {
		if key == nil {
			return nil
		}
		id := agentIDs[*key]
		return &id
	}
	for _, in := range doc.Numbers {
		if err := db.checkQuota(tx, ws, quotaNumbers); err != nil {
			return nil, err
		}
		n := &data.Number{ID: db.ids.New(data.PrefixNumber), WorkspaceID: ws, PhoneNumber: in.PhoneNumber,
			Nickname: in.Nickname, Provider: in.Provider, InboundAgentID: bind(in.InboundAgent),
			OutboundAgentID: bind(in.OutboundAgent), CreatedAt: now, UpdatedAt: now}
		if err := putNumber(tx, nil, n); err != nil {
			return nil, err
		}
		if err := phones.Put([]byte(n.PhoneNumber), []byte(n.ID)); err != nil {
			return nil, err
		}
		if err := indexPut(tx.Bucket(bucketNumbersByWS), ws, n.ID); err != nil {
			return nil, err
		}
		if _, err := db.recordEvent(ctx, tx, data.EventNumberCreated, ws, n); err != nil {
			return nil, err
		}
		res.Numbers = append(res.Numbers, data.ImportedNumber{PhoneNumber: n.PhoneNumber, ID: n.ID})
	}

	for i, in := range doc.Webhooks {
		if err := db.checkQuota(tx, ws, quotaWebhooks); err != nil {
			return nil, err
		}
		row := webhookRow{Webhook: data.Webhook{ID: db.ids.New(data.PrefixWebhook), WorkspaceID: ws, URL: in.URL,
			Description: in.Description, Events: in.Events, Enabled: in.Enabled, CreatedAt: now, UpdatedAt: now},
			Secret: plan.sealed[i]}
		if err := putJSON(tx.Bucket(bucketWebhooks), []byte(row.ID), row); err != nil {
			return nil, err
		}
		if err := indexPut(tx.Bucket(bucketWebhooksByWS), ws, row.ID); err != nil {
			return nil, err
		}
		w := row.Webhook
		res.Webhooks = append(res.Webhooks, &w)
		res.WebhookSecrets = append(res.WebhookSecrets, data.ImportedSecret{WebhookID: w.ID, URL: w.URL, Secret: plan.secrets[i]})
	}
	return res, nil
}

// importAgent stores one agent with its versions, keeping their numbers, descriptions,
// snapshots and dates, and the agent's status and published_version. Versions record the
// importing user as their publisher: the original user ids mean nothing here.
func (db *DB) importAgent(ctx context.Context, tx *bbolt.Tx, in *data.ExportAgent, path string, plan *importPlan, now data.Time) (string, error) {
	p := data.PrincipalFrom(ctx)
	publisher := ""
	if p != nil {
		publisher = p.UserID
	}
	id := db.ids.New(data.PrefixAgent)
	row := &agentRow{Agent: data.Agent{
		ID: id, WorkspaceID: plan.ws, Name: in.Name, Status: in.Status, PublishedVersion: in.PublishedVersion,
		AgentConfig: plan.importConfig(in.AgentConfig, path), CreatedAt: now, UpdatedAt: now,
	}}
	if in.PublishedVersion != nil {
		row.PublishedAt = &now // live on this instance since now
	}
	versions := tx.Bucket(bucketAgentVersions)
	for j, v := range in.Versions {
		cfg, err := db.sealedConfig(plan.importConfig(v.AgentConfig, validate.Index(path+".versions", j)))
		if err != nil {
			return "", err
		}
		vr := versionRow{data.AgentVersion{AgentID: id, VersionNumber: v.VersionNumber, Description: v.Description,
			Name: v.Name, AgentConfig: cfg, CreatedAt: v.CreatedAt, PublishedBy: publisher}}
		if err := putJSON(versions, versionKey(id, v.VersionNumber), vr); err != nil {
			return "", err
		}
		// Numbering goes on after the highest imported version, never reusing one.
		row.LastVersion = max(row.LastVersion, v.VersionNumber)
	}
	if err := db.putPlainAgentRow(tx, row, ""); err != nil {
		return "", err
	}
	if err := indexPut(tx.Bucket(bucketAgentsByWS), plan.ws, id); err != nil {
		return "", err
	}
	_, err := db.recordEvent(ctx, tx, data.EventAgentCreated, plan.ws, masked(row))
	return id, err
}

// importConfig maps knowledge base keys to the new ids and turns a masked api_key into
// null, noting its path: a mask is not a key, and storing it as one would fail every call.
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
	return cfg
}
