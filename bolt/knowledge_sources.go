package bolt

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"path"
	"strings"
	"unicode/utf8"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/validate"
)

// sourceRow is one source as stored, whatever its type; the fields of the other types
// stay empty.
type sourceRow struct {
	ID              string     `json:"id"`
	Type            string     `json:"type"`
	KnowledgeBaseID string     `json:"knowledge_base_id"`
	WorkspaceID     string     `json:"workspace_id"`
	Title           string     `json:"title,omitempty"`
	Content         string     `json:"content,omitempty"`
	URL             string     `json:"url,omitempty"`
	Attempt         int        `json:"attempt,omitempty"` // url fetch requests so far
	Filename        string     `json:"filename,omitempty"`
	ContentType     string     `json:"content_type,omitempty"`
	SizeBytes       int64      `json:"size_bytes,omitempty"`
	SHA256          string     `json:"sha256,omitempty"`
	Status          string     `json:"status"`
	Error           *string    `json:"error"`
	CreatedAt       data.Time  `json:"created_at"`
	IndexedAt       *data.Time `json:"indexed_at"`
}

func sourceKey(kbID, sourceID string) []byte { return indexKey(kbID, sourceID) }

// appendTo adds the source's item to the list of its type in kb.
func (s *sourceRow) appendTo(kb *data.KnowledgeBase) {
	switch s.Type {
	case data.SourceTexts:
		kb.Texts = append(kb.Texts, s.text())
	case data.SourceURLs:
		kb.URLs = append(kb.URLs, s.url())
	case data.SourceFiles:
		kb.Files = append(kb.Files, s.file())
	}
}

func (s *sourceRow) text() data.TextSource {
	return data.TextSource{ID: s.ID, Title: s.Title, Content: s.Content, CreatedAt: s.CreatedAt}
}

func (s *sourceRow) url() data.URLSource {
	return data.URLSource{ID: s.ID, URL: s.URL, Status: s.Status, Error: s.Error, CreatedAt: s.CreatedAt, IndexedAt: s.IndexedAt}
}

func (s *sourceRow) file() data.FileSource {
	return data.FileSource{ID: s.ID, Filename: s.Filename, ContentType: s.ContentType, SizeBytes: s.SizeBytes,
		SHA256: s.SHA256, Status: s.Status, Error: s.Error, CreatedAt: s.CreatedAt, IndexedAt: s.IndexedAt}
}

// item is the source as the record shows it, for event payloads.
func (s *sourceRow) item() any {
	switch s.Type {
	case data.SourceTexts:
		return s.text()
	case data.SourceURLs:
		return s.url()
	}
	return s.file()
}

// preparedSource is a source made ready outside any transaction: extraction, chunking and
// embedding are slow, and a write transaction blocks every other writer.
type preparedSource struct {
	row     sourceRow
	chunks  []knowledge.Chunk
	content []byte // a file's bytes, written to disk before the metadata commits
}

// maxReason bounds a failure reason shown on a source.
const maxReason = 500

// reason turns an error into a one-line failure reason for the record.
func reason(err error) *string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > maxReason {
		cut := maxReason
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return &s
}

// prepareSources assigns ids and extracts, chunks and embeds texts and files; kinds are the
// detected formats of in.Files. URLs are left pending.
func (db *DB) prepareSources(ctx context.Context, workspaceID, kbID string, in data.SourcesAdd, kinds []knowledge.Kind) []*preparedSource {
	now := db.timeNow()
	base := func(typ string) sourceRow {
		return sourceRow{ID: db.ids.New(data.PrefixSource), Type: typ, KnowledgeBaseID: kbID, WorkspaceID: workspaceID, CreatedAt: now}
	}
	var out []*preparedSource
	for i, f := range in.Files {
		ps := &preparedSource{row: base(data.SourceFiles), content: f.Content}
		ps.row.Filename = knowledge.SanitizeFilename(f.Filename)
		ps.row.ContentType = knowledge.ContentType(kinds[i])
		ps.row.SizeBytes = int64(len(f.Content))
		ps.row.SHA256 = sha256Hex(f.Content)
		text, err := knowledge.Extract(kinds[i], f.Content)
		db.index(ctx, ps, text, err)
		out = append(out, ps)
	}
	for _, t := range in.Texts {
		ps := &preparedSource{row: base(data.SourceTexts)}
		ps.row.Title, ps.row.Content = t.Title, t.Content
		db.index(ctx, ps, t.Content, nil)
		out = append(out, ps)
	}
	for _, u := range in.URLs {
		ps := &preparedSource{row: base(data.SourceURLs)}
		ps.row.URL, ps.row.Status, ps.row.Attempt = u, data.SourcePending, 1
		out = append(out, ps)
	}
	return out
}

// index chunks and embeds a source's extracted text, or marks it failed with the reason.
func (db *DB) index(ctx context.Context, ps *preparedSource, text string, extractErr error) {
	now := db.timeNow()
	fail := func(err error) {
		ps.row.Status, ps.row.Error, ps.row.IndexedAt, ps.chunks = data.SourceFailed, reason(err), nil, nil
	}
	if extractErr != nil {
		fail(extractErr)
		return
	}
	pieces := knowledge.ChunkText(text, knowledge.ChunkOptions{})
	if len(pieces) == 0 {
		fail(knowledge.ErrNoText)
		return
	}
	ps.chunks = make([]knowledge.Chunk, len(pieces))
	for i, p := range pieces {
		ps.chunks[i] = knowledge.Chunk{ID: chunkID(ps.row.ID, i), SourceID: ps.row.ID, Text: p}
	}
	db.embedChunks(ctx, ps.chunks)
	ps.row.Status, ps.row.Error, ps.row.IndexedAt = data.SourceIndexed, nil, now.Ptr()
}

// storeSources writes prepared sources, their chunks, pending fetches and events in tx,
// and brings the cached index in step once tx commits.
func (db *DB) storeSources(ctx context.Context, tx *bbolt.Tx, kb *kbRow, prepared []*preparedSource) error {
	for _, ps := range prepared {
		if err := putJSON(tx.Bucket(bucketKBSources), sourceKey(kb.ID, ps.row.ID), ps.row); err != nil {
			return err
		}
		if err := putChunks(tx, kb.ID, ps.row.ID, ps.chunks); err != nil {
			return err
		}
		if ps.row.Status == data.SourcePending {
			if err := tx.Bucket(bucketKBPendingURLs).Put(sourceKey(kb.ID, ps.row.ID), nil); err != nil {
				return err
			}
			continue
		}
		if err := db.recordSourceEvent(ctx, tx, kb, &ps.row); err != nil {
			return err
		}
	}
	tx.OnCommit(func() {
		for _, ps := range prepared {
			if len(ps.chunks) > 0 {
				db.kbIndexes.apply(kb.ID, func(ix *knowledge.Index) { ix.Add(ps.row.ID, ps.chunks) })
			}
		}
	})
	return nil
}

// recordSourceEvent records knowledge_base.source_indexed or source_failed.
func (db *DB) recordSourceEvent(ctx context.Context, tx *bbolt.Tx, kb *kbRow, s *sourceRow) error {
	typ := data.EventKnowledgeSourceIndexed
	if s.Status == data.SourceFailed {
		typ = data.EventKnowledgeSourceFailed
	}
	_, err := db.recordEvent(ctx, tx, typ, kb.WorkspaceID, map[string]any{
		"knowledge_base_id": kb.ID, "source_type": s.Type, "source": s.item(),
	})
	return err
}

// sourcesField names the member a per-knowledge-base limit error is reported under: the
// first kind of source the request adds.
func sourcesField(in data.SourcesAdd) string {
	switch {
	case len(in.Files) > 0:
		return "files"
	case len(in.Texts) > 0:
		return "texts"
	}
	return "urls"
}

func tooManySources(field string, max, have, adding int) error {
	return data.FieldError(field, fmt.Sprintf("A knowledge base holds at most %d sources; it has %d and this request adds %d.", max, have, adding))
}

// checkSourceRoom refuses an add that would pass the per-knowledge-base limit.
func (db *DB) checkSourceRoom(tx *bbolt.Tx, kbID string, in data.SourcesAdd) error {
	have := scopeCount(tx.Bucket(bucketKBSources), kbID)
	adding := len(in.Files) + len(in.Texts) + len(in.URLs)
	if have+adding > db.maxSources() {
		return tooManySources(sourcesField(in), db.maxSources(), have, adding)
	}
	return nil
}

// AddSources implements data.KnowledgeBaseService. Nothing is stored unless every source
// is acceptable; files are on disk, fsynced, before their rows commit.
func (db *DB) AddSources(ctx context.Context, kbID string, in data.SourcesAdd) (*data.KnowledgeBase, error) {
	var errs validate.Errors
	kinds := make([]knowledge.Kind, len(in.Files))
	for i, f := range in.Files {
		if len(f.Content) == 0 {
			continue // SourcesAdd reports it
		}
		kind, err := knowledge.Detect(f.Filename, f.Content)
		if err != nil {
			p := validate.Index("files", i)
			errs.Addf(p, "The %s file (%s) is not accepted: %s.", p, knowledge.SanitizeFilename(f.Filename), strings.TrimPrefix(err.Error(), knowledge.ErrUnsupported.Error()+": "))
		}
		kinds[i] = kind
	}
	if err := validate.Combine(validate.SourcesAdd(in, nil), errs.Err()); err != nil {
		return nil, err
	}
	// Refuse early what the transaction would refuse, before the slow work.
	var workspaceID string
	err := db.view(func(tx *bbolt.Tx) error {
		row, err := loadKB(ctx, tx, kbID)
		if err != nil {
			return err
		}
		workspaceID = row.WorkspaceID
		return db.checkSourceRoom(tx, kbID, in)
	})
	if err != nil {
		return nil, err
	}
	prepared := db.prepareSources(ctx, workspaceID, kbID, in, kinds)
	written, err := db.writeSourceFiles(workspaceID, kbID, prepared)
	if err != nil {
		db.removeFiles(written)
		return nil, err
	}
	if testHookBeforeSourceCommit != nil {
		testHookBeforeSourceCommit()
	}
	var out *data.KnowledgeBase
	err = db.update(func(tx *bbolt.Tx) error {
		row, err := loadKB(ctx, tx, kbID)
		if err != nil {
			return err
		}
		if err := db.checkSourceRoom(tx, kbID, in); err != nil {
			return err
		}
		if err := db.storeSources(ctx, tx, row, prepared); err != nil {
			return err
		}
		row.UpdatedAt = db.timeNow()
		if err := putJSON(tx.Bucket(bucketKnowledgeBase), []byte(row.ID), row); err != nil {
			return err
		}
		out, err = kbRecord(tx, row)
		return err
	})
	if err != nil {
		db.removeFiles(written) // the rows never committed: no file may outlive them
		return nil, err
	}
	return out, nil
}

// testHookBeforeSourceCommit, when set by a test, runs after an add's files are on disk and
// before its metadata commits (the crash test).
var testHookBeforeSourceCommit func()

// loadSource reads a source of kbID of the given type; anything else is not found.
func loadSource(tx *bbolt.Tx, kbID, typ, id string) (*sourceRow, error) {
	var s sourceRow
	found, err := getJSON(tx.Bucket(bucketKBSources), sourceKey(kbID, id), &s)
	if err != nil {
		return nil, err
	}
	if !found || s.Type != typ {
		return nil, data.NotFound("Source")
	}
	return &s, nil
}

// DeleteSource implements data.KnowledgeBaseService.
func (db *DB) DeleteSource(ctx context.Context, kbID, sourceType, sourceID string) (*data.KnowledgeBase, error) {
	if err := validate.SourceType(sourceType); err != nil {
		return nil, err
	}
	var out *data.KnowledgeBase
	err := db.update(func(tx *bbolt.Tx) error {
		row, _, err := loadKBForChange(ctx, tx, kbID)
		if err != nil {
			return err
		}
		src, err := loadSource(tx, kbID, sourceType, sourceID)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketKBSources).Delete(sourceKey(kbID, sourceID)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketKBPendingURLs).Delete(sourceKey(kbID, sourceID)); err != nil {
			return err
		}
		if err := deletePrefix(tx.Bucket(bucketKBChunks), chunkPrefix(kbID, sourceID)); err != nil {
			return err
		}
		row.UpdatedAt = db.timeNow()
		if err := putJSON(tx.Bucket(bucketKnowledgeBase), []byte(row.ID), row); err != nil {
			return err
		}
		if out, err = kbRecord(tx, row); err != nil {
			return err
		}
		tx.OnCommit(func() {
			db.kbIndexes.apply(kbID, func(ix *knowledge.Index) { ix.Remove(sourceID) })
			if src.Type == data.SourceFiles {
				db.removeFiles([]string{db.sourceFilePath(src.WorkspaceID, kbID, sourceID)})
			}
		})
		_, err = db.recordEvent(ctx, tx, data.EventKnowledgeBaseUpdated, row.WorkspaceID, out)
		return err
	})
	return out, err
}

// RefetchURL implements data.KnowledgeBaseService. The source keeps its chunks until the
// new fetch completes, so retrieval does not go blank meanwhile.
func (db *DB) RefetchURL(ctx context.Context, kbID, sourceID string) (*data.KnowledgeBase, error) {
	var out *data.KnowledgeBase
	err := db.update(func(tx *bbolt.Tx) error {
		row, err := loadKB(ctx, tx, kbID)
		if err != nil {
			return err
		}
		src, err := loadSource(tx, kbID, data.SourceURLs, sourceID)
		if err != nil {
			return err
		}
		src.Attempt++
		src.Status, src.Error = data.SourcePending, nil
		if err := putJSON(tx.Bucket(bucketKBSources), sourceKey(kbID, sourceID), src); err != nil {
			return err
		}
		if err := tx.Bucket(bucketKBPendingURLs).Put(sourceKey(kbID, sourceID), nil); err != nil {
			return err
		}
		row.UpdatedAt = db.timeNow()
		if err := putJSON(tx.Bucket(bucketKnowledgeBase), []byte(row.ID), row); err != nil {
			return err
		}
		out, err = kbRecord(tx, row)
		return err
	})
	return out, err
}

// PendingURLs implements data.KnowledgeBaseService: every url source waiting for a fetch,
// oldest knowledge base first. The fetcher calls it on start, so a restart resumes.
func (db *DB) PendingURLs(ctx context.Context) ([]data.URLFetch, error) {
	var out []data.URLFetch
	err := db.view(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketKBPendingURLs).ForEach(func(k, _ []byte) error {
			kbID, srcID, ok := strings.Cut(string(k), "\x00")
			if !ok {
				return nil
			}
			src, err := loadSource(tx, kbID, data.SourceURLs, srcID)
			if err != nil {
				if data.ErrorCode(err) == data.ENOTFOUND {
					return nil
				}
				return err
			}
			out = append(out, data.URLFetch{KnowledgeBaseID: kbID, SourceID: srcID, URL: src.URL, Attempt: src.Attempt})
			return nil
		})
	})
	return out, err
}

// stillPending reports whether job is the current request for a pending source.
func stillPending(tx *bbolt.Tx, job data.URLFetch) (*sourceRow, bool, error) {
	src, err := loadSource(tx, job.KnowledgeBaseID, data.SourceURLs, job.SourceID)
	if data.ErrorCode(err) == data.ENOTFOUND {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return src, src.Status == data.SourcePending && src.Attempt == job.Attempt, nil
}

// urlFilename gives Detect a name that carries the response's media type, so an HTML page
// at "/" is judged as HTML and a PDF at "/download?id=3" as a PDF.
func urlFilename(rawURL, contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "text/html", "application/xhtml+xml":
		return "page.html"
	case "application/pdf":
		return "page.pdf"
	case "application/json":
		return "page.json"
	case "text/markdown":
		return "page.md"
	case "text/csv":
		return "page.csv"
	case "text/plain":
		return "page.txt"
	}
	p := rawURL
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	return path.Base(p)
}

// CompleteURL implements data.KnowledgeBaseService.
func (db *DB) CompleteURL(ctx context.Context, job data.URLFetch, got data.FetchedURL) error {
	var current bool
	err := db.view(func(tx *bbolt.Tx) error {
		_, ok, err := stillPending(tx, job)
		current = ok
		return err
	})
	if err != nil || !current {
		return err
	}
	ps := &preparedSource{}
	text, extractErr := "", got.Err
	if extractErr == nil {
		var kind knowledge.Kind
		kind, extractErr = knowledge.Detect(urlFilename(job.URL, got.ContentType), got.Body)
		if extractErr == nil {
			text, extractErr = knowledge.Extract(kind, got.Body)
		}
	}
	ps.row.ID = job.SourceID
	db.index(ctx, ps, text, extractErr)
	return db.update(func(tx *bbolt.Tx) error {
		src, ok, err := stillPending(tx, job)
		if err != nil || !ok {
			return err // deleted or refetched meanwhile: this result is stale
		}
		src.Status, src.Error, src.IndexedAt = ps.row.Status, ps.row.Error, ps.row.IndexedAt
		if err := putJSON(tx.Bucket(bucketKBSources), sourceKey(job.KnowledgeBaseID, job.SourceID), src); err != nil {
			return err
		}
		if err := tx.Bucket(bucketKBPendingURLs).Delete(sourceKey(job.KnowledgeBaseID, job.SourceID)); err != nil {
			return err
		}
		if err := deletePrefix(tx.Bucket(bucketKBChunks), chunkPrefix(job.KnowledgeBaseID, job.SourceID)); err != nil {
			return err
		}
		if err := putChunks(tx, job.KnowledgeBaseID, job.SourceID, ps.chunks); err != nil {
			return err
		}
		var kb kbRow
		found, err := getJSON(tx.Bucket(bucketKnowledgeBase), []byte(job.KnowledgeBaseID), &kb)
		if err != nil {
			return err
		}
		if !found {
			return errors.New("url source without its knowledge base")
		}
		kb.UpdatedAt = db.timeNow()
		if err := putJSON(tx.Bucket(bucketKnowledgeBase), []byte(kb.ID), kb); err != nil {
			return err
		}
		tx.OnCommit(func() {
			db.kbIndexes.apply(kb.ID, func(ix *knowledge.Index) {
				if len(ps.chunks) == 0 {
					ix.Remove(job.SourceID)
				} else {
					ix.Add(job.SourceID, ps.chunks)
				}
			})
		})
		return db.recordSourceEvent(ctx, tx, &kb, src)
	})
}
