package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"iter"
	"mime/multipart"
	"net/textproto"
	"net/url"

	"github.com/voiceapi/voiceapi/data"
)

// CampaignsService calls the campaign routes (docs/campaigns.md): campaigns, their
// recipients, dial-task claims and the suppression list.
type CampaignsService struct{ c *Client }

func campaignQuery(f data.CampaignFilter) url.Values {
	q := url.Values{}
	if f.AgentID != "" {
		q.Set("agent_id", f.AgentID)
	}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	return q
}

// List returns one page of campaigns, newest first.
func (s *CampaignsService) List(ctx context.Context, f data.CampaignFilter, p data.PageRequest, opts ...RequestOption) ([]*data.Campaign, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "campaignList", query: pageQuery(campaignQuery(f), p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.Campaign](res)
}

// All iterates over every campaign the filter selects.
func (s *CampaignsService) All(ctx context.Context, f data.CampaignFilter, opts ...RequestOption) iter.Seq2[*data.Campaign, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.Campaign, data.Page, error) {
		return s.List(ctx, f, p, opts...)
	})
}

// Create creates a campaign with its recipients given as JSON.
func (s *CampaignsService) Create(ctx context.Context, in data.CampaignCreate, opts ...RequestOption) (*data.Campaign, string, error) {
	return sendRecord[data.Campaign](ctx, s.c, "campaignCreate", nil, in, opts)
}

// CreateFromCSV creates a campaign whose recipients are the rows of csv (a header with a
// phone_number column, an optional timezone column, the rest variables); in gives the
// settings and must list no recipients. Errors name the file's lines.
func (s *CampaignsService) CreateFromCSV(ctx context.Context, in data.CampaignCreate, csv []byte, opts ...RequestOption) (*data.Campaign, string, error) {
	settings, err := campaignSettings(in)
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	// The same settings and file make the same body, so that a create repeated with its
	// Idempotency-Key (the server compares the bodies' hashes) replays instead of being
	// refused as another request, as a random boundary would make it.
	if err := w.SetBoundary(contentBoundary(settings, csv)); err != nil {
		return nil, "", err
	}
	for _, p := range []struct {
		name, filename, ctype string
		content               []byte
	}{{"campaign", "", "application/json", settings}, {"file", "recipients.csv", "text/csv", csv}} {
		h := textproto.MIMEHeader{}
		disp := `form-data; name="` + p.name + `"`
		if p.filename != "" {
			disp += `; filename="` + p.filename + `"`
		}
		h.Set("Content-Disposition", disp)
		h.Set("Content-Type", p.ctype)
		pw, err := w.CreatePart(h)
		if err == nil {
			_, err = pw.Write(p.content)
		}
		if err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	res, err := s.c.do(ctx, request{op: "campaignCreate", body: buf.Bytes(), contentType: w.FormDataContentType(), opts: opts})
	if err != nil {
		return nil, "", err
	}
	return record[data.Campaign](res)
}

// Get returns a campaign with its counts.
func (s *CampaignsService) Get(ctx context.Context, id string, opts ...RequestOption) (*data.Campaign, string, error) {
	return getRecord[data.Campaign](ctx, s.c, "campaignShow", []string{id}, opts)
}

// Recipients returns one page of a campaign's recipients with their attempts, newest
// first, those in f.State only when given.
func (s *CampaignsService) Recipients(ctx context.Context, id string, f data.RecipientFilter, p data.PageRequest, opts ...RequestOption) ([]*data.Recipient, data.Page, error) {
	q := url.Values{}
	if f.State != "" {
		q.Set("state", f.State)
	}
	res, err := s.c.do(ctx, request{op: "campaignRecipients", pathArgs: []string{id}, query: pageQuery(q, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.Recipient](res)
}

// AllRecipients iterates over every recipient of a campaign the filter selects, page by
// page.
func (s *CampaignsService) AllRecipients(ctx context.Context, id string, f data.RecipientFilter, opts ...RequestOption) iter.Seq2[*data.Recipient, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.Recipient, data.Page, error) {
		return s.Recipients(ctx, id, f, p, opts...)
	})
}

// Pause pauses a campaign: no task is leased until it is resumed.
func (s *CampaignsService) Pause(ctx context.Context, id string, opts ...RequestOption) (*data.Campaign, string, error) {
	return sendRecord[data.Campaign](ctx, s.c, "campaignPause", []string{id}, nil, opts)
}

// Resume resumes a paused campaign.
func (s *CampaignsService) Resume(ctx context.Context, id string, opts ...RequestOption) (*data.Campaign, string, error) {
	return sendRecord[data.Campaign](ctx, s.c, "campaignResume", []string{id}, nil, opts)
}

// Cancel cancels a campaign: nothing more is dialed.
func (s *CampaignsService) Cancel(ctx context.Context, id string, opts ...RequestOption) (*data.Campaign, string, error) {
	return sendRecord[data.Campaign](ctx, s.c, "campaignCancel", []string{id}, nil, opts)
}

// Delete deletes a finished campaign (completed, or canceled with no call in progress)
// with its recipients; an open one is a 409 conflict.
func (s *CampaignsService) Delete(ctx context.Context, id string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "campaignDelete", []string{id}, nil, opts)
}

// ClaimDialTasks leases due dial tasks, each with its call-start answer (credentials in
// clear: keep them in memory for the call only). Report each task's call with
// Calls.Update: ongoing once dialed, then its end.
func (s *CampaignsService) ClaimDialTasks(ctx context.Context, in data.DialClaim, opts ...RequestOption) (*data.DialClaimAnswer, error) {
	b, err := jsonBody(in)
	if err != nil {
		return nil, err
	}
	var out data.DialClaimAnswer
	if err := s.c.dataOf(ctx, request{op: "dialClaim", body: b, contentType: "application/json", opts: opts}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Suppressions returns one page of the workspace's suppression list.
func (s *CampaignsService) Suppressions(ctx context.Context, p data.PageRequest, opts ...RequestOption) ([]*data.Suppression, data.Page, error) {
	res, err := s.c.do(ctx, request{op: "suppressionList", query: pageQuery(nil, p), opts: opts})
	if err != nil {
		return nil, data.Page{}, err
	}
	return list[data.Suppression](res)
}

// AllSuppressions iterates over the whole suppression list, page by page.
func (s *CampaignsService) AllSuppressions(ctx context.Context, opts ...RequestOption) iter.Seq2[*data.Suppression, error] {
	return all(ctx, s.c, func(ctx context.Context, p data.PageRequest) ([]*data.Suppression, data.Page, error) {
		return s.Suppressions(ctx, p, opts...)
	})
}

// Suppress adds a number to the suppression list; the entry stored for it either way.
func (s *CampaignsService) Suppress(ctx context.Context, in data.SuppressionCreate, opts ...RequestOption) (*data.Suppression, string, error) {
	return sendRecord[data.Suppression](ctx, s.c, "suppressionAdd", nil, in, opts)
}

// ImportSuppressions adds a CSV's numbers (phone_number column, optional reason) to the
// suppression list, every row or none.
func (s *CampaignsService) ImportSuppressions(ctx context.Context, csv []byte, opts ...RequestOption) (*data.SuppressionImport, error) {
	var out data.SuppressionImport
	err := s.c.dataOf(ctx, request{op: "suppressionImport", body: csv, contentType: "text/csv", opts: opts}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Unsuppress removes an entry from the suppression list.
func (s *CampaignsService) Unsuppress(ctx context.Context, id string, opts ...RequestOption) error {
	return s.c.noContent(ctx, "suppressionDelete", []string{id}, nil, opts)
}

// campaignSettings is in as the campaign part: its JSON without the recipients member.
func campaignSettings(in data.CampaignCreate) ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := data.DecodeJSON(b, &m); err != nil {
		return nil, err
	}
	delete(m, "recipients")
	return json.Marshal(m)
}

// contentBoundary is a multipart boundary derived from the parts' content: a body cannot
// hold the digest of itself, so it never occurs inside a part.
func contentBoundary(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
		h.Write([]byte{0})
	}
	return "voiceapi-" + hex.EncodeToString(h.Sum(nil)[:24]) // a boundary is at most 70 characters
}
