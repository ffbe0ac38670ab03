package client

import (
	"bytes"
	"context"
	"iter"
	"mime/multipart"
	"net/textproto"
	"strings"

	"github.com/voiceapi/voiceapi/data"
)

// KnowledgeBasesService calls the knowledge base and source routes.
type KnowledgeBasesService struct{ c *Client }

// List returns one page of knowledge bases, newest first.
func (s *KnowledgeBasesService) List(ctx context.Context, p data.PageRequest, opts ...RequestOption) ([]*data.KnowledgeBase, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "knowledgeBaseList", query: pageQuery(nil, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.KnowledgeBase](res)
}

// All iterates over every knowledge base.
func (s *KnowledgeBasesService) All(ctx context.Context, opts ...RequestOption) iter.Seq2[*data.KnowledgeBase, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.KnowledgeBase, data.Page, error) {
		return s.List(ctx, p, opts...)
	})
}

// Create makes a knowledge base with optional texts (indexed at once) and urls (fetched
// in the background).
func (s *KnowledgeBasesService) Create(ctx context.Context, in data.KnowledgeBaseCreate, opts ...RequestOption) (*data.KnowledgeBase, string, error) {
	return sendRecord[data.KnowledgeBase](ctx, s.c, "knowledgeBaseCreate", nil, in, opts)
}

// Get returns a knowledge base with its sources.
func (s *KnowledgeBasesService) Get(ctx context.Context, id string, opts ...RequestOption) (*data.KnowledgeBase, string, error) {
	return getRecord[data.KnowledgeBase](ctx, s.c, "knowledgeBaseShow", []string{id}, opts)
}

// Update renames a knowledge base.
func (s *KnowledgeBasesService) Update(ctx context.Context, id string, in data.KnowledgeBaseUpdate, opts ...RequestOption) (*data.KnowledgeBase, string, error) {
	return sendRecord[data.KnowledgeBase](ctx, s.c, "knowledgeBaseUpdate", []string{id}, in, opts)
}

// Delete removes a knowledge base; agents drop it from their knowledge_base_ids.
func (s *KnowledgeBasesService) Delete(ctx context.Context, id string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "knowledgeBaseDelete", []string{id}, nil, opts)
}

// Query returns the chunks best matching a query, best first.
func (s *KnowledgeBasesService) Query(ctx context.Context, id string, q data.KnowledgeQuery, opts ...RequestOption) ([]data.KnowledgeChunk, error) {
	body, err := jsonBody(q)
	if err != nil {
		return nil, err
	}
	var out []data.KnowledgeChunk
	err = s.c.dataOf(ctx, request{op: "knowledgeBaseQuery", pathArgs: []string{id}, body: body, contentType: "application/json", opts: opts}, &out)
	return out, err
}

// AddSources adds texts, urls and files. With files the body is multipart/form-data (a
// files part each, a texts part each with the title as its filename, a urls part each);
// without, JSON.
func (s *KnowledgeBasesService) AddSources(ctx context.Context, id string, in data.SourcesAdd, opts ...RequestOption) (*data.KnowledgeBase, string, error) {
	if len(in.Files) == 0 {
		return sendRecord[data.KnowledgeBase](ctx, s.c, "sourcesAdd", []string{id}, in, opts)
	}
	body, ctype, err := sourcesMultipart(in)
	if err != nil {
		return nil, "", err
	}
	res, err := s.c.do(ctx, request{op: "sourcesAdd", pathArgs: []string{id}, body: body, contentType: ctype, opts: opts})
	if err != nil {
		return nil, "", err
	}
	return record[data.KnowledgeBase](res)
}

func sourcesMultipart(in data.SourcesAdd) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part := func(name, filename string, content []byte) error {
		h := textproto.MIMEHeader{}
		disp := `form-data; name="` + name + `"`
		if filename != "" {
			disp += `; filename="` + quoteEscaper.Replace(filename) + `"`
		}
		h.Set("Content-Disposition", disp)
		h.Set("Content-Type", "application/octet-stream")
		if filename == "" || name == "texts" {
			h.Set("Content-Type", "text/plain; charset=utf-8")
		}
		pw, err := w.CreatePart(h)
		if err == nil {
			_, err = pw.Write(content)
		}
		return err
	}
	for _, f := range in.Files {
		if err := part("files", f.Filename, f.Content); err != nil {
			return nil, "", err
		}
	}
	for _, t := range in.Texts {
		if err := part("texts", t.Title, []byte(t.Content)); err != nil {
			return nil, "", err
		}
	}
	for _, u := range in.URLs {
		if err := part("urls", "", []byte(u)); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

// DeleteSource removes one source (sourceType is data.SourceTexts, SourceURLs or
// SourceFiles) and returns the knowledge base.
func (s *KnowledgeBasesService) DeleteSource(ctx context.Context, id, sourceType, sourceID string, opts ...RequestOption) (*data.KnowledgeBase, string, error) {
	res, err := s.c.do(ctx, request{op: "sourceDelete", pathArgs: []string{id, sourceType, sourceID}, opts: opts})
	if err != nil {
		return nil, "", err
	}
	return record[data.KnowledgeBase](res)
}

// RefetchURL puts a url source back to pending, to be fetched again.
func (s *KnowledgeBasesService) RefetchURL(ctx context.Context, id, sourceID string, opts ...RequestOption) (*data.KnowledgeBase, string, error) {
	return sendRecord[data.KnowledgeBase](ctx, s.c, "sourceURLRefetch", []string{id, sourceID}, nil, opts)
}

// FileContent returns a file source's original bytes and content type.
func (s *KnowledgeBasesService) FileContent(ctx context.Context, id, sourceID string, opts ...RequestOption) ([]byte, string, error) {
	res, err := s.c.do(ctx, request{op: "sourceFileContent", pathArgs: []string{id, sourceID}, opts: opts})
	if err != nil {
		return nil, "", err
	}
	return res.body, res.header.Get("Content-Type"), nil
}
