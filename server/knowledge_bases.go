package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// Upload limits of conventions §15, the defaults of Config.MaxFileSize and
// Config.MaxMultipartBody.
const (
	DefaultMaxFileSize      = 20 << 20
	DefaultMaxMultipartBody = 50 << 20
)

// maxURLPart bounds a urls part of a multipart request: a URL is at most 2048 characters.
const maxURLPart = 8 << 10

func (s *Server) knowledgeBaseRoutes() []route {
	if s.cfg.MaxFileSize == 0 {
		s.cfg.MaxFileSize = DefaultMaxFileSize
	}
	if s.cfg.MaxMultipartBody == 0 {
		s.cfg.MaxMultipartBody = DefaultMaxMultipartBody
	}
	s.useURLFetcher()
	read, write := data.Read(data.ModuleKnowledgeBase), data.Write(data.ModuleKnowledgeBase)
	const kb = "/api/v1/knowledge-bases"
	return []route{
		{Method: "GET", Path: kb, Need: read, handle: s.handleKnowledgeBaseList},
		{Method: "POST", Path: kb, Need: write, Idempotent: true, handle: s.handleKnowledgeBaseCreate},
		{Method: "GET", Path: kb + "/{knowledge_base_id}", Need: read, handle: s.handleKnowledgeBaseShow},
		{Method: "PUT", Path: kb + "/{knowledge_base_id}", Need: write, handle: s.handleKnowledgeBaseUpdate},
		{Method: "DELETE", Path: kb + "/{knowledge_base_id}", Need: write, handle: s.handleKnowledgeBaseDelete},
		{Method: "POST", Path: kb + "/{knowledge_base_id}/sources/add", Need: write, Idempotent: true, Long: true,
			BodyLimit: s.cfg.MaxMultipartBody, handle: s.handleSourcesAdd},
		{Method: "DELETE", Path: kb + "/{knowledge_base_id}/sources/delete/{source_type}/{source_id}", Need: write, handle: s.handleSourceDelete},
		{Method: "GET", Path: kb + "/{knowledge_base_id}/sources/files/{source_id}/content", Need: read, Long: true, handle: s.handleSourceFileContent},
		{Method: "POST", Path: kb + "/{knowledge_base_id}/sources/urls/{source_id}/refetch", Need: write, NoBody: true, handle: s.handleSourceURLRefetch},
		{Method: "POST", Path: kb + "/{knowledge_base_id}/query", Need: read, handle: s.handleKnowledgeBaseQuery},
		// The agent's knowledge is Knowledge Base data; the agent itself must be visible too
		// (agent_ids), which the service checks.
		{Method: "POST", Path: "/api/v1/agents/{agent_id}/knowledge/query", Need: read, handle: s.handleAgentKnowledgeQuery},
	}
}

// writeKnowledgeBase answers with knowledge base kb and, beside it, what the caller may
// do with it (access: the service's verdict, which is the caller's and not the record's,
// so the ETag, events and exports leave it out).
func writeKnowledgeBase(w http.ResponseWriter, status int, kb *data.KnowledgeBase) error {
	return writeRecord(w, status, kb, data.AccessAnswer(kb.Access))
}

// handleKnowledgeBaseList: GET /api/v1/knowledge-bases — newest first.
func (s *Server) handleKnowledgeBaseList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	list, page, err := s.svc.KnowledgeBases.ListKnowledgeBases(r.Context(), req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleKnowledgeBaseCreate: POST /api/v1/knowledge-bases — 201; texts are indexed at
// once, urls are fetched in the background.
func (s *Server) handleKnowledgeBaseCreate(w http.ResponseWriter, r *http.Request) error {
	var in data.KnowledgeBaseCreate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	kb, err := s.svc.KnowledgeBases.CreateKnowledgeBase(ctx, in)
	if err != nil {
		return err
	}
	return writeKnowledgeBase(w, http.StatusCreated, kb)
}

// handleKnowledgeBaseShow: GET /api/v1/knowledge-bases/{knowledge_base_id}.
func (s *Server) handleKnowledgeBaseShow(w http.ResponseWriter, r *http.Request) error {
	kb, err := s.svc.KnowledgeBases.KnowledgeBase(r.Context(), mux.Vars(r)["knowledge_base_id"])
	if err != nil {
		return err
	}
	return writeKnowledgeBase(w, http.StatusOK, kb)
}

// handleKnowledgeBaseUpdate: PUT /api/v1/knowledge-bases/{knowledge_base_id} — renames.
func (s *Server) handleKnowledgeBaseUpdate(w http.ResponseWriter, r *http.Request) error {
	var in data.KnowledgeBaseUpdate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	kb, err := s.svc.KnowledgeBases.UpdateKnowledgeBase(ctx, mux.Vars(r)["knowledge_base_id"], in)
	if err != nil {
		return err
	}
	return writeKnowledgeBase(w, http.StatusOK, kb)
}

// handleKnowledgeBaseDelete: DELETE /api/v1/knowledge-bases/{knowledge_base_id} — 204.
func (s *Server) handleKnowledgeBaseDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.KnowledgeBases.DeleteKnowledgeBase(r.Context(), mux.Vars(r)["knowledge_base_id"]); err != nil {
		return err
	}
	return writeNoContent(w)
}

// handleSourcesAdd: POST /api/v1/knowledge-bases/{knowledge_base_id}/sources/add —
// multipart (files, files[], texts, urls parts) or JSON {texts, urls}; 200 with the record.
// Every part is read and checked before anything is stored, so a 413 or 422 leaves
// nothing behind.
func (s *Server) handleSourcesAdd(w http.ResponseWriter, r *http.Request) error {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var in data.SourcesAdd
	var ctx context.Context
	switch mt {
	case "multipart/form-data":
		var partErrs, err error
		in, partErrs, err = s.readSourceParts(r)
		if err != nil {
			return err
		}
		ctx = data.WithInputFaults(r.Context(), withQueryFaults(r, partErrs))
	case "application/json":
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxJSONBody)
		var err error
		if ctx, err = decodeInput(r, &in); err != nil {
			return err
		}
	default:
		return data.Errorf(data.EMEDIATYPE, "Send sources as multipart/form-data (files, texts, urls parts) or as application/json.")
	}
	kb, err := s.svc.KnowledgeBases.AddSources(ctx, mux.Vars(r)["knowledge_base_id"], in)
	if err != nil {
		return err
	}
	return writeKnowledgeBase(w, http.StatusOK, kb)
}

// readSourceParts streams the parts of a multipart body, each under its own limit, rather
// than letting ParseMultipartForm spill them to temporary files. partErrs collects the
// faults to report with the body's other validation errors; err is a failure that ends
// the request (413, 400).
func (s *Server) readSourceParts(r *http.Request) (in data.SourcesAdd, partErrs error, err error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return in, nil, data.Errorf(data.EMALFORMED, "The multipart body cannot be read: %v.", err)
	}
	var errs validate.Errors
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return in, nil, bodyReadError(err, s.cfg.MaxMultipartBody)
		}
		name := part.FormName()
		switch name {
		case "files", "files[]", "files.items":
			p := validate.Index("files", len(in.Files))
			b, err := readPart(part, s.cfg.MaxFileSize)
			if err != nil {
				return in, nil, partError(err, p, s.cfg.MaxFileSize, s.cfg.MaxMultipartBody)
			}
			in.Files = append(in.Files, data.FileUpload{Filename: part.FileName(), Content: b})
		case "texts", "texts[]":
			p := validate.Index("texts", len(in.Texts))
			// A character is at most 4 bytes: a longer part cannot pass MaxTextContent.
			b, err := readPart(part, 4*validate.MaxTextContent)
			if err != nil {
				return in, nil, partError(err, p, 4*validate.MaxTextContent, s.cfg.MaxMultipartBody)
			}
			if !utf8.Valid(b) {
				errs.Addf(p+".content", "The %s.content part must be UTF-8 text.", p)
			} else if bytes.IndexByte(b, 0) >= 0 {
				errs.Addf(p+".content", "The %s.content part must not contain U+0000 (a NUL character).", p)
			}
			in.Texts = append(in.Texts, data.TextInput{Title: part.FileName(), Content: string(b)})
		case "urls", "urls[]":
			p := validate.Index("urls", len(in.URLs))
			b, err := readPart(part, maxURLPart)
			if err != nil {
				return in, nil, partError(err, p, maxURLPart, s.cfg.MaxMultipartBody)
			}
			in.URLs = append(in.URLs, strings.TrimSpace(string(b)))
		default:
			// Drain it, so a later part can still be read, and name it.
			if _, err := io.Copy(io.Discard, part); err != nil {
				return in, nil, bodyReadError(err, s.cfg.MaxMultipartBody)
			}
			errs.Addf(name, "The %s part is not a known field; send files, texts or urls parts.", name)
		}
	}
	return in, errs.Err(), nil
}

// errPartTooLarge is readPart's error for a part over its limit.
var errPartTooLarge = errors.New("part too large")

// readPart reads a part of at most max bytes.
func readPart(part io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(part, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, errPartTooLarge
	}
	return b, nil
}

// partError turns a failure reading a part into the response's error.
func partError(err error, path string, partLimit, bodyLimit int64) error {
	if errors.Is(err, errPartTooLarge) {
		return data.Errorf(data.ETOOLARGE, "The %s part is larger than %s.", path, humanBytes(partLimit))
	}
	return bodyReadError(err, bodyLimit)
}

// bodyReadError is 413 when the whole body passed its limit, else 400.
func bodyReadError(err error, limit int64) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return data.Errorf(data.ETOOLARGE, "The request body is larger than %s.", humanBytes(limit))
	}
	return data.Errorf(data.EMALFORMED, "The multipart body cannot be read: %v.", err)
}

func humanBytes(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// handleSourceDelete: DELETE /api/v1/knowledge-bases/{knowledge_base_id}/sources/delete/{source_type}/{source_id}
// — 200 with the record.
func (s *Server) handleSourceDelete(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	kb, err := s.svc.KnowledgeBases.DeleteSource(r.Context(), v["knowledge_base_id"], v["source_type"], v["source_id"])
	if err != nil {
		return err
	}
	return writeKnowledgeBase(w, http.StatusOK, kb)
}

// handleSourceURLRefetch: POST /api/v1/knowledge-bases/{knowledge_base_id}/sources/urls/{source_id}/refetch
// — 202 with the record, the source pending again.
func (s *Server) handleSourceURLRefetch(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	kb, err := s.svc.KnowledgeBases.RefetchURL(r.Context(), v["knowledge_base_id"], v["source_id"])
	if err != nil {
		return err
	}
	return writeKnowledgeBase(w, http.StatusAccepted, kb)
}

// handleSourceFileContent: GET /api/v1/knowledge-bases/{knowledge_base_id}/sources/files/{source_id}/content
// — the original bytes, with their content type and the sanitized filename.
func (s *Server) handleSourceFileContent(w http.ResponseWriter, r *http.Request) error {
	v := mux.Vars(r)
	item, f, err := s.svc.KnowledgeBases.SourceFile(r.Context(), v["knowledge_base_id"], v["source_id"])
	if err != nil {
		return err
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", item.ContentType)
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": item.Filename}))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", `"`+item.SHA256+`"`)
	// ServeContent answers Range and If-None-Match; the empty name keeps it from guessing
	// a type over the one set above.
	http.ServeContent(w, r, "", item.CreatedAt.Time, f)
	return nil
}

// handleKnowledgeBaseQuery: POST /api/v1/knowledge-bases/{knowledge_base_id}/query — the best chunks,
// best first.
func (s *Server) handleKnowledgeBaseQuery(w http.ResponseWriter, r *http.Request) error {
	var q data.KnowledgeQuery
	ctx, err := decodeInput(r, &q)
	if err != nil {
		return err
	}
	chunks, err := s.svc.KnowledgeBases.QueryKnowledgeBase(ctx, mux.Vars(r)["knowledge_base_id"], q)
	if err != nil {
		return err
	}
	return writeChunks(w, chunks)
}

// handleAgentKnowledgeQuery: POST /api/v1/agents/{agent_id}/knowledge/query — the agent's
// knowledge_base_config over its knowledge_base_ids.
func (s *Server) handleAgentKnowledgeQuery(w http.ResponseWriter, r *http.Request) error {
	var q data.AgentKnowledgeQuery
	ctx, err := decodeInput(r, &q)
	if err != nil {
		return err
	}
	chunks, err := s.svc.KnowledgeBases.QueryAgentKnowledge(ctx, mux.Vars(r)["agent_id"], q)
	if err != nil {
		return err
	}
	return writeChunks(w, chunks)
}

func writeChunks(w http.ResponseWriter, chunks []data.KnowledgeChunk) error {
	if chunks == nil {
		chunks = []data.KnowledgeChunk{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": chunks})
	return nil
}
