package service

// Export of a whole workspace (conventions §17, docs/export-import.md). The records are
// copied out in one read transaction and the files opened; the document is written after,
// with each file streamed from storage into its content_base64, so neither a large export
// nor a slow client holds a transaction open or a workspace's files in memory.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// ExportService implements data.WorkspaceExportService: a whole workspace out as one
// document, or one document in as new records (import.go), each recorded in the
// workspace's audit log (workspace.exported, workspace.imported).
type ExportService struct {
	*base
	// kb prepares and stores imported sources as an add of sources does.
	kb *KnowledgeBaseService
	// agents seals and opens the agents' api_keys.
	agents *AgentService
}

var _ data.WorkspaceExportService = (*ExportService)(nil)

func newExportService(b *base) *ExportService {
	return &ExportService{base: b, kb: newKnowledgeBases(b), agents: &AgentService{base: b}}
}

// exportWorkspace checks that the caller may act on workspaceID: with a principal, the
// workspace it acts in (the route's authorization established the membership and role);
// without one (the CLI), any workspace that exists.
func exportWorkspace(ctx context.Context, tx Tx, workspaceID string) (*data.WorkspaceRecord, error) {
	if p := data.PrincipalFrom(ctx); p != nil && p.WorkspaceID != workspaceID {
		return nil, data.NotFound("Workspace")
	}
	ws, err := tx.Workspace(workspaceID)
	if err == nil && ws == nil {
		err = data.NotFound("Workspace")
	}
	return ws, err
}

// exportedEvent is the data of a workspace.exported event: how much left and whether the
// agents' api_keys left in the clear, never any of them.
type exportedEvent struct {
	IncludeSecrets bool `json:"include_secrets"`
	data.ExportCounts
}

// ExportWorkspace implements data.WorkspaceExportService. The event is recorded once the
// records are read and before any is written out, so no export leaves without it.
func (s *ExportService) ExportWorkspace(ctx context.Context, workspaceID string, opts data.ExportOptions) (data.ExportStream, error) {
	st := &exportStream{}
	err := s.store.View(ctx, func(tx Tx) error {
		ws, err := exportWorkspace(ctx, tx, workspaceID)
		if err != nil {
			return err
		}
		st.doc = data.WorkspaceExport{
			Format: data.ExportFormat, Version: data.ExportVersion, ExportedAt: s.timeNow(),
			Secrets:   data.ExportSecretsMasked,
			Workspace: data.ExportWorkspace{Name: ws.Name, Description: ws.Description, Privacy: ptrTo(ws.Privacy.Normalized())},
			Agents:    []data.ExportAgent{}, KnowledgeBases: []data.ExportKnowledgeBase{},
			Numbers: []data.ExportNumber{}, Webhooks: []data.ExportWebhook{}, Suppressions: []data.ExportSuppression{},
		}
		if st.doc.Workspace.Simulation, err = s.exportSimulation(ws.Simulation, opts); err != nil {
			return err
		}
		if st.doc.Workspace.Embeddings, err = s.exportEmbeddings(ws, opts); err != nil {
			return err
		}
		if st.doc.Workspace.PriceTable, err = exportPriceTable(tx, workspaceID); err != nil {
			return err
		}
		if opts.IncludeSecrets {
			st.doc.Secrets = data.ExportSecretsIncluded
		}
		kbKeys, err := exportKnowledgeBases(tx, workspaceID, st)
		if err != nil {
			return err
		}
		agentKeys, err := s.exportAgents(tx, workspaceID, kbKeys, opts, st)
		if err != nil {
			return err
		}
		if err := exportNumbersAndWebhooks(tx, workspaceID, agentKeys, st); err != nil {
			return err
		}
		return exportSuppressions(tx, workspaceID, st)
	})
	if err != nil {
		return nil, err
	}
	if err := st.open(ctx, s.store, workspaceID); err != nil {
		st.Close()
		return nil, err
	}
	ev := exportedEvent{IncludeSecrets: opts.IncludeSecrets, ExportCounts: st.Counts()}
	err = s.store.Update(ctx, func(tx Tx) error {
		_, err := s.record(ctx, tx, data.EventWorkspaceExported, workspaceID, ev)
		return err
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// all collects every page of a newest-first list and returns it oldest first, the
// document's order.
func all[T any](list func(req data.PageRequest) ([]T, data.Page, error)) ([]T, error) {
	var out []T
	req := data.PageRequest{PerPage: 100}
	for {
		items, page, err := list(req)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if page.NextCursor == nil {
			break
		}
		req.Cursor = *page.NextCursor
	}
	slices.Reverse(out)
	return out, nil
}

// keyMaker hands out export-local keys made from names ("Support bot" → "support-bot"),
// readable in a config-as-code file, with -2, -3... when two names give the same key.
type keyMaker map[string]bool

func (m keyMaker) key(name, fallback string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	base := b.String()
	if base == "" {
		base = fallback
	}
	k := base
	for n := 2; m[k]; n++ {
		k = base + "-" + strconv.Itoa(n)
	}
	m[k] = true
	return k
}

// exportConfig returns cfg (its api_key opened) as the document shows it: knowledge base
// ids as keys (an id with no key, a knowledge base deleted since a version was published,
// is left out, as a restore would leave it out), and api_key masked unless secrets are
// included.
func exportConfig(cfg data.AgentConfig, kbKeys map[string]string, opts data.ExportOptions) data.AgentConfig {
	keys := make([]string, 0, len(cfg.LLMConfig.KnowledgeBaseIDs))
	for _, id := range cfg.LLMConfig.KnowledgeBaseIDs {
		if k, ok := kbKeys[id]; ok {
			keys = append(keys, k)
		}
	}
	cfg.LLMConfig.KnowledgeBaseIDs = keys
	if !opts.IncludeSecrets {
		if cfg.LLMConfig.APIKey != nil {
			m := data.MaskSecret(*cfg.LLMConfig.APIKey)
			cfg.LLMConfig.APIKey = &m
		}
		cfg, _ = data.MapCredentialHeaders(cfg, func(v string) (string, error) { return data.MaskSecret(v), nil })
	}
	return cfg
}

// exportSimulation is the workspace's simulation setting as an export holds it: its
// api_key opened, masked unless the export includes secrets.
func (s *ExportService) exportSimulation(m *data.SimulationModel, opts data.ExportOptions) (*data.SimulationModel, error) {
	if m == nil {
		return nil, nil
	}
	out := *m
	if out.APIKey != nil {
		plain, err := s.sealer.Open(*out.APIKey)
		if err != nil {
			return nil, fmt.Errorf("opening simulation.api_key: %w", err)
		}
		out.APIKey = &plain
		if !opts.IncludeSecrets {
			out = out.Masked()
		}
	}
	return &out, nil
}

// exportKnowledgeBases adds the workspace's knowledge bases, oldest first, and returns
// their keys by id.
func exportKnowledgeBases(tx Tx, ws string, st *exportStream) (map[string]string, error) {
	kbs, err := all(func(req data.PageRequest) ([]*data.KnowledgeBase, data.Page, error) {
		return tx.KnowledgeBasePage(ws, req)
	})
	if err != nil {
		return nil, err
	}
	keys, km := map[string]string{}, keyMaker{}
	for _, kb := range kbs {
		out := data.ExportKnowledgeBase{Key: km.key(kb.Name, "knowledge-base"), Name: kb.Name,
			Texts: []data.TextInput{}, URLs: []string{}, Files: []data.ExportFile{}}
		keys[kb.ID] = out.Key
		for _, t := range kb.Texts {
			out.Texts = append(out.Texts, data.TextInput{Title: t.Title, Content: t.Content})
		}
		for _, u := range kb.URLs {
			out.URLs = append(out.URLs, u.URL)
		}
		for _, f := range kb.Files {
			out.Files = append(out.Files, data.ExportFile{Filename: f.Filename, ContentType: f.ContentType, SHA256: f.SHA256})
			st.files = append(st.files, &exportFile{kbID: kb.ID, sourceID: f.ID})
		}
		st.doc.KnowledgeBases = append(st.doc.KnowledgeBases, out)
	}
	return keys, nil
}

// exportAgents adds the workspace's agents with their versions, oldest first, and returns
// their keys by id.
func (s *ExportService) exportAgents(tx Tx, ws string, kbKeys map[string]string, opts data.ExportOptions, st *exportStream) (map[string]string, error) {
	ids, err := all(func(req data.PageRequest) ([]string, data.Page, error) {
		return tx.AgentIDs(ws, "", nil, AgentSearch{}, req)
	})
	if err != nil {
		return nil, err
	}
	keys, km := map[string]string{}, keyMaker{}
	for _, id := range ids {
		row, err := tx.Agent(id)
		if err != nil {
			return nil, err
		}
		if row == nil {
			return nil, fmt.Errorf("agent %s indexed but missing", id)
		}
		cfg, err := s.agents.open(row.AgentConfig)
		if err != nil {
			return nil, err
		}
		out := data.ExportAgent{
			Key: km.key(row.Name, "agent"), Name: row.Name, Status: row.Status, PublishedVersion: row.PublishedVersion,
			AgentConfig: exportConfig(cfg, kbKeys, opts), Versions: []data.ExportAgentVersion{},
			Privacy: ptrTo(row.Privacy.Normalized()), MaxConcurrentCalls: row.MaxConcurrentCalls, Tests: []data.ExportAgentTest{},
		}
		tests, err := tx.AgentTests(id)
		if err != nil {
			return nil, err
		}
		for _, t := range tests {
			out.Tests = append(out.Tests, data.ExportTest(t))
		}
		keys[id] = out.Key
		versions, err := all(func(req data.PageRequest) ([]*data.AgentVersion, data.Page, error) { return tx.AgentVersions(id, req) })
		if err != nil {
			return nil, err
		}
		for _, v := range versions {
			cfg, err := s.agents.open(v.AgentConfig)
			if err != nil {
				return nil, err
			}
			out.Versions = append(out.Versions, data.ExportAgentVersion{
				VersionNumber: v.VersionNumber, Description: v.Description, Name: v.Name,
				AgentConfig: exportConfig(cfg, kbKeys, opts), CreatedAt: v.CreatedAt,
			})
		}
		st.doc.Agents = append(st.doc.Agents, out)
	}
	return keys, nil
}

// exportNumbersAndWebhooks adds the numbers, bound by agent key, and the webhooks without
// their secrets.
func exportNumbersAndWebhooks(tx Tx, ws string, agentKeys map[string]string, st *exportStream) error {
	key := func(id *string) *string {
		if id == nil {
			return nil
		}
		if k, ok := agentKeys[*id]; ok {
			return &k
		}
		return nil
	}
	numbers, err := all(func(req data.PageRequest) ([]*data.Number, data.Page, error) {
		return tx.Numbers(ws, NumberSearch{}, req)
	})
	if err != nil {
		return err
	}
	for _, n := range numbers {
		st.doc.Numbers = append(st.doc.Numbers, data.ExportNumber{PhoneNumber: n.PhoneNumber, Nickname: n.Nickname,
			Provider: n.Provider, InboundAgent: key(n.InboundAgentID), OutboundAgent: key(n.OutboundAgentID),
			Variables: orEmptyVars(n.Variables)})
	}
	hooks, err := tx.WorkspaceWebhooks(ws)
	if err != nil {
		return err
	}
	for _, w := range hooks {
		st.doc.Webhooks = append(st.doc.Webhooks, data.ExportWebhook{URL: w.URL, Description: w.Description,
			Events: w.Events, Enabled: w.Enabled})
	}
	return nil
}

// exportFile is a file source to stream: which one, and its bytes once opened.
type exportFile struct {
	kbID, sourceID string
	r              io.ReadCloser
}

// exportStream implements data.ExportStream.
type exportStream struct {
	doc   data.WorkspaceExport
	files []*exportFile // in document order: knowledge bases, then their files
	nonce string        // makes the content placeholders impossible to meet in user data
}

// open opens every file to stream and puts a placeholder in its content_base64. A file
// gone since the read was deleted with its source meanwhile: it leaves the export too.
func (st *exportStream) open(ctx context.Context, files SourceFiles, ws string) error {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	st.nonce = hex.EncodeToString(nonce)
	i, kept := 0, st.files[:0]
	for k := range st.doc.KnowledgeBases {
		metas := st.doc.KnowledgeBases[k].Files
		keep := metas[:0]
		for _, meta := range metas {
			ef := st.files[i]
			i++
			r, err := files.OpenSourceFile(ctx, ws, ef.kbID, ef.sourceID)
			if data.ErrorCode(err) == data.ENOTFOUND {
				continue
			}
			if err != nil {
				return err
			}
			ef.r = r
			meta.ContentBase64 = st.placeholder(len(kept))
			keep = append(keep, meta)
			kept = append(kept, ef)
		}
		st.doc.KnowledgeBases[k].Files = keep
	}
	st.files = kept
	return nil
}

func (st *exportStream) placeholder(i int) string {
	return fmt.Sprintf("voiceapi-export-file-%s-%d", st.nonce, i)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteTo writes the document, indented for readable diffs, streaming each file's bytes
// as base64 where its placeholder stands.
func (st *exportStream) WriteTo(w io.Writer) (int64, error) {
	body, err := json.MarshalIndent(st.doc, "", "  ")
	if err != nil {
		return 0, err
	}
	cw := &countingWriter{w: w}
	for i, ef := range st.files {
		mark := []byte(`"` + st.placeholder(i) + `"`)
		at := bytes.Index(body, mark)
		if at < 0 {
			return cw.n, fmt.Errorf("export: placeholder of file %d not found", i)
		}
		if _, err := cw.Write(body[:at+1]); err != nil {
			return cw.n, err
		}
		enc := base64.NewEncoder(base64.StdEncoding, cw)
		if _, err := io.Copy(enc, ef.r); err != nil {
			return cw.n, fmt.Errorf("export: reading the file of source %s: %w", ef.sourceID, err)
		}
		if err := enc.Close(); err != nil {
			return cw.n, err
		}
		body = body[at+len(mark)-1:]
	}
	if _, err := cw.Write(body); err != nil {
		return cw.n, err
	}
	_, err = cw.Write([]byte("\n"))
	return cw.n, err
}

// Counts implements data.ExportStream.
func (st *exportStream) Counts() data.ExportCounts { return st.doc.Counts() }

// Close closes the opened files.
func (st *exportStream) Close() error {
	var errs []error
	for _, ef := range st.files {
		if ef.r != nil {
			errs = append(errs, ef.r.Close())
			ef.r = nil
		}
	}
	return errors.Join(errs...)
}

// ptrTo returns a pointer to a copy of v.
func ptrTo[T any](v T) *T { return &v }
