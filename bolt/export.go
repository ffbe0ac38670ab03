package bolt

// Export of a whole workspace (conventions §17, docs/export-import.md). The records are
// copied out in one short read transaction and the files opened; the document is written
// after, with each file streamed from disk into its content_base64, so neither a large
// export nor a slow client holds a transaction open or a workspace's files in memory.

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
	"io/fs"
	"os"
	"strconv"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
)

var _ data.WorkspaceExportService = (*DB)(nil)

// exportWorkspaceID checks that the caller may act on workspaceID: with a principal, the
// workspace it acts in (the route's authorization established the membership and role);
// without one (the CLI), any workspace that exists.
func exportWorkspaceID(ctx context.Context, tx *bbolt.Tx, workspaceID string) (*data.WorkspaceRecord, error) {
	if p := data.PrincipalFrom(ctx); p != nil && p.WorkspaceID != workspaceID {
		return nil, data.NotFound("Workspace")
	}
	return loadWorkspace(tx, workspaceID)
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

// exportConfig returns cfg as the document shows it: knowledge base ids as keys (an id
// with no key, a knowledge base deleted since a version was published, is left out, as a
// restore would leave it out), and api_key masked unless secrets are included.
func exportConfig(cfg data.AgentConfig, kbKeys map[string]string, opts data.ExportOptions) data.AgentConfig {
	keys := make([]string, 0, len(cfg.LLMConfig.KnowledgeBaseIDs))
	for _, id := range cfg.LLMConfig.KnowledgeBaseIDs {
		if k, ok := kbKeys[id]; ok {
			keys = append(keys, k)
		}
	}
	cfg.LLMConfig.KnowledgeBaseIDs = keys
	if !opts.IncludeSecrets && cfg.LLMConfig.APIKey != nil {
		m := data.MaskSecret(*cfg.LLMConfig.APIKey)
		cfg.LLMConfig.APIKey = &m
	}
	return cfg
}

// exportFile is a file source to stream: where its bytes are.
type exportFile struct {
	path string
	f    *os.File
}

// exportStream implements data.ExportStream.
type exportStream struct {
	doc   data.WorkspaceExport
	files []*exportFile // in document order: knowledge bases, then their files
	nonce string        // makes the content placeholders impossible to meet in user data
}

// ExportWorkspace implements data.WorkspaceExportService.
func (db *DB) ExportWorkspace(ctx context.Context, workspaceID string, opts data.ExportOptions) (data.ExportStream, error) {
	s := &exportStream{}
	err := db.view(func(tx *bbolt.Tx) error {
		ws, err := exportWorkspaceID(ctx, tx, workspaceID)
		if err != nil {
			return err
		}
		s.doc = data.WorkspaceExport{
			Format: data.ExportFormat, Version: data.ExportVersion, ExportedAt: db.timeNow(),
			Secrets:   data.ExportSecretsMasked,
			Workspace: data.ExportWorkspace{Name: ws.Name, Description: ws.Description},
			Agents:    []data.ExportAgent{}, KnowledgeBases: []data.ExportKnowledgeBase{},
			Numbers: []data.ExportNumber{}, Webhooks: []data.ExportWebhook{},
		}
		if opts.IncludeSecrets {
			s.doc.Secrets = data.ExportSecretsIncluded
		}
		kbKeys, err := db.exportKnowledgeBases(tx, workspaceID, s)
		if err != nil {
			return err
		}
		agentKeys, err := db.exportAgents(tx, workspaceID, kbKeys, opts, s)
		if err != nil {
			return err
		}
		return exportNumbersAndWebhooks(tx, workspaceID, agentKeys, s)
	})
	if err != nil {
		return nil, err
	}
	if err := s.open(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// exportKnowledgeBases adds the workspace's knowledge bases, oldest first, and returns
// their keys by id.
func (db *DB) exportKnowledgeBases(tx *bbolt.Tx, ws string, s *exportStream) (map[string]string, error) {
	keys, km := map[string]string{}, keyMaker{}
	for _, id := range scopeIDs(tx.Bucket(bucketKBByWS), ws) {
		var row kbRow
		found, err := getJSON(tx.Bucket(bucketKnowledgeBase), []byte(id), &row)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, fmt.Errorf("knowledge base %s indexed but missing", id)
		}
		kb, err := kbRecord(tx, &row)
		if err != nil {
			return nil, err
		}
		out := data.ExportKnowledgeBase{Key: km.key(row.Name, "knowledge-base"), Name: row.Name,
			Texts: []data.TextInput{}, URLs: []string{}, Files: []data.ExportFile{}}
		keys[id] = out.Key
		for _, t := range kb.Texts {
			out.Texts = append(out.Texts, data.TextInput{Title: t.Title, Content: t.Content})
		}
		for _, u := range kb.URLs {
			out.URLs = append(out.URLs, u.URL)
		}
		for _, f := range kb.Files {
			out.Files = append(out.Files, data.ExportFile{Filename: f.Filename, ContentType: f.ContentType, SHA256: f.SHA256})
			s.files = append(s.files, &exportFile{path: db.sourceFilePath(ws, id, f.ID)})
		}
		s.doc.KnowledgeBases = append(s.doc.KnowledgeBases, out)
	}
	return keys, nil
}

// exportAgents adds the workspace's agents with their versions, oldest first, and returns
// their keys by id.
func (db *DB) exportAgents(tx *bbolt.Tx, ws string, kbKeys map[string]string, opts data.ExportOptions, s *exportStream) (map[string]string, error) {
	keys, km := map[string]string{}, keyMaker{}
	for _, id := range scopeIDs(tx.Bucket(bucketAgentsByWS), ws) {
		var row agentRow
		found, err := getJSON(tx.Bucket(bucketAgents), []byte(id), &row)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, fmt.Errorf("agent %s indexed but missing", id)
		}
		if err := db.unsealConfig(&row.AgentConfig); err != nil {
			return nil, err
		}
		out := data.ExportAgent{
			Key: km.key(row.Name, "agent"), Name: row.Name, Status: row.Status, PublishedVersion: row.PublishedVersion,
			AgentConfig: exportConfig(row.AgentConfig, kbKeys, opts), Versions: []data.ExportAgentVersion{},
		}
		keys[id] = out.Key
		versions := tx.Bucket(bucketAgentVersions)
		for _, n := range scopeIDs(versions, id) {
			var v versionRow
			if _, err := getJSON(versions, indexKey(id, n), &v); err != nil {
				return nil, err
			}
			if err := db.unsealConfig(&v.AgentConfig); err != nil {
				return nil, err
			}
			out.Versions = append(out.Versions, data.ExportAgentVersion{
				VersionNumber: v.VersionNumber, Description: v.Description, Name: v.Name,
				AgentConfig: exportConfig(v.AgentConfig, kbKeys, opts), CreatedAt: v.CreatedAt,
			})
		}
		s.doc.Agents = append(s.doc.Agents, out)
	}
	return keys, nil
}

// exportNumbersAndWebhooks adds the numbers, bound by agent key, and the webhooks without
// their secrets.
func exportNumbersAndWebhooks(tx *bbolt.Tx, ws string, agentKeys map[string]string, s *exportStream) error {
	key := func(id *string) *string {
		if id == nil {
			return nil
		}
		if k, ok := agentKeys[*id]; ok {
			return &k
		}
		return nil
	}
	for _, id := range scopeIDs(tx.Bucket(bucketNumbersByWS), ws) {
		n, err := loadNumber(tx, ws, id)
		if err != nil {
			return err
		}
		s.doc.Numbers = append(s.doc.Numbers, data.ExportNumber{PhoneNumber: n.PhoneNumber, Nickname: n.Nickname,
			Provider: n.Provider, InboundAgent: key(n.InboundAgentID), OutboundAgent: key(n.OutboundAgentID)})
	}
	for _, id := range scopeIDs(tx.Bucket(bucketWebhooksByWS), ws) {
		row, err := loadWebhook(tx, ws, id)
		if err != nil {
			return err
		}
		s.doc.Webhooks = append(s.doc.Webhooks, data.ExportWebhook{URL: row.URL, Description: row.Description,
			Events: row.Events, Enabled: row.Enabled})
	}
	return nil
}

// open opens every file to stream and puts a placeholder in its content_base64. A file
// gone since the read was deleted with its source meanwhile: it leaves the export too.
func (s *exportStream) open() error {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	s.nonce = hex.EncodeToString(nonce)
	i, kept := 0, s.files[:0]
	for k := range s.doc.KnowledgeBases {
		files := s.doc.KnowledgeBases[k].Files
		keep := files[:0]
		for _, meta := range files {
			ef := s.files[i]
			i++
			f, err := os.Open(ef.path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			ef.f = f
			meta.ContentBase64 = s.placeholder(len(kept))
			keep = append(keep, meta)
			kept = append(kept, ef)
		}
		s.doc.KnowledgeBases[k].Files = keep
	}
	s.files = kept
	return nil
}

func (s *exportStream) placeholder(i int) string {
	return fmt.Sprintf("voiceapi-export-file-%s-%d", s.nonce, i)
}

// WriteTo writes the document, indented for readable diffs, streaming each file's bytes
// as base64 where its placeholder stands.
func (s *exportStream) WriteTo(w io.Writer) (int64, error) {
	body, err := json.MarshalIndent(s.doc, "", "  ")
	if err != nil {
		return 0, err
	}
	cw := &countingWriter{w: w}
	for i, ef := range s.files {
		mark := []byte(`"` + s.placeholder(i) + `"`)
		at := bytes.Index(body, mark)
		if at < 0 {
			return cw.n, fmt.Errorf("export: placeholder of file %d not found", i)
		}
		if _, err := cw.Write(body[:at+1]); err != nil {
			return cw.n, err
		}
		enc := base64.NewEncoder(base64.StdEncoding, cw)
		if _, err := io.Copy(enc, ef.f); err != nil {
			return cw.n, fmt.Errorf("export: reading %s: %w", ef.path, err)
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
func (s *exportStream) Counts() data.ExportCounts { return s.doc.Counts() }

// Close closes the opened files.
func (s *exportStream) Close() error {
	for _, ef := range s.files {
		if ef.f != nil {
			ef.f.Close()
			ef.f = nil
		}
	}
	return nil
}
