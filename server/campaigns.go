package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
	"github.com/voiceapi/voiceapi/validate"
)

// Campaigns (conventions §25, docs/campaigns.md) belong to their agent and to the
// call_history module; the dial-task claim is a runtime's, as POST /calls/start is.
func (s *Server) campaignRoutes() []route {
	s.uploadDefaults()
	read, write := data.Read(data.ModuleCallHistory), data.Write(data.ModuleCallHistory)
	const c = "/api/v1/campaigns"
	return []route{
		{Method: "GET", Path: c, Need: read, handle: s.handleCampaignList},
		{Method: "POST", Path: c, Need: write, Idempotent: true, BodyLimit: s.cfg.MaxFileSize, Long: true, handle: s.handleCampaignCreate, legacyRecheck: s.recheckCampaignAgent},
		{Method: "GET", Path: c + "/{campaign_id}", Need: read, handle: s.handleCampaignShow},
		{Method: "DELETE", Path: c + "/{campaign_id}", Need: write, handle: s.handleCampaignDelete},
		{Method: "GET", Path: c + "/{campaign_id}/recipients", Need: read, handle: s.handleCampaignRecipients},
		{Method: "POST", Path: c + "/{campaign_id}/pause", Need: write, NoBody: true, handle: s.handleCampaignPause},
		{Method: "POST", Path: c + "/{campaign_id}/resume", Need: write, NoBody: true, handle: s.handleCampaignResume},
		{Method: "POST", Path: c + "/{campaign_id}/cancel", Need: write, NoBody: true, handle: s.handleCampaignCancel},
		{Method: "POST", Path: "/api/v1/dial-tasks/claim", Need: callStartNeed, handle: s.handleDialClaim},
		{Method: "GET", Path: "/api/v1/suppressions", Need: read, handle: s.handleSuppressionList},
		{Method: "POST", Path: "/api/v1/suppressions", Need: write, handle: s.handleSuppressionAdd},
		{Method: "POST", Path: "/api/v1/suppressions/import", Need: write, BodyLimit: s.cfg.MaxFileSize, Long: true, handle: s.handleSuppressionImport},
		{Method: "DELETE", Path: "/api/v1/suppressions/{suppression_id}", Need: data.NeedSuppressionRemove(), handle: s.handleSuppressionDelete},
	}
}

// uploadDefaults sets the upload limits' defaults (conventions §15) whichever route
// table reads them first.
func (s *Server) uploadDefaults() {
	if s.cfg.MaxFileSize == 0 {
		s.cfg.MaxFileSize = DefaultMaxFileSize
	}
	if s.cfg.MaxMultipartBody == 0 {
		s.cfg.MaxMultipartBody = DefaultMaxMultipartBody
	}
}

// handleCampaignList: GET /api/v1/campaigns?agent_id=&status=. The parameters' faults
// go to the service, which adds its own in one 422.
func (s *Server) handleCampaignList(w http.ResponseWriter, r *http.Request) error {
	req, pageErr := pageRequest(r)
	f, filterErr := validate.CampaignFilterParams(r.URL.Query())
	ctx := data.WithInputFaults(r.Context(), validate.Combine(pageErr, filterErr))
	list, page, err := s.svc.Campaigns.Campaigns(ctx, f, req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleCampaignCreate: POST /api/v1/campaigns — JSON with recipients, or multipart with
// a campaign part (the same JSON without recipients) and a file part (CSV); 201.
func (s *Server) handleCampaignCreate(w http.ResponseWriter, r *http.Request) error {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var in data.CampaignCreate
	var ctx context.Context
	if mt == "multipart/form-data" {
		var partErrs, err error
		if in, partErrs, err = s.readCampaignParts(r); err != nil {
			return err
		}
		ctx = data.WithInputFaults(r.Context(), withQueryFaults(r, partErrs))
	} else {
		var err error
		if ctx, err = decodeInput(r, &in); err != nil {
			return err
		}
	}
	c, err := s.svc.Campaigns.CreateCampaign(ctx, in)
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusCreated, c, nil)
}

// readCampaignParts reads a multipart create: the campaign part's JSON and the file
// part's CSV rows. partErrs are faults to report with the body's other errors.
func (s *Server) readCampaignParts(r *http.Request) (in data.CampaignCreate, partErrs error, err error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return in, nil, data.Errorf(data.EMALFORMED, "The multipart body cannot be read: %v.", err)
	}
	var errs validate.Errors
	var faults []error // the settings' and the file's, named by their own paths
	var settings, file []byte
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return in, nil, bodyReadError(err, s.cfg.MaxFileSize)
		}
		switch name := part.FormName(); name {
		case "campaign":
			settings, err = readPart(part, s.cfg.MaxJSONBody)
			if err != nil {
				return in, nil, partError(err, "campaign", s.cfg.MaxJSONBody, s.cfg.MaxFileSize)
			}
		case "file":
			file, err = readPart(part, s.cfg.MaxFileSize)
			if err != nil {
				return in, nil, partError(err, "file", s.cfg.MaxFileSize, s.cfg.MaxFileSize)
			}
		default:
			if _, err := io.Copy(io.Discard, part); err != nil {
				return in, nil, bodyReadError(err, s.cfg.MaxFileSize)
			}
			errs.Addf(name, "The %s part is not a known field; send a campaign part (JSON) and a file part (CSV).", name)
		}
	}
	if settings == nil {
		errs.Add("campaign", "The campaign part (the campaign's settings as JSON) is required.")
	} else if err := strictjson.Decode(settings, &in); err != nil {
		if data.ErrorCode(err) != data.EINVALID {
			return in, nil, err
		}
		faults = append(faults, err)
	}
	if len(in.Recipients) > 0 {
		errs.Add("recipients", "With a CSV file, the recipients come from the file: the campaign part must not list them.")
	}
	if file == nil {
		errs.Add("file", "The file part (a CSV with a phone_number column) is required.")
		return in, validate.Combine(append(faults, errs.Err())...), nil
	}
	rows, err := readRecipientsCSV(bytes.NewReader(file))
	if err != nil {
		// A file that cannot be read as rows has no recipients to check: its faults and
		// the settings' (their decoding's, and their own rules' where decoding named
		// nothing) are the answer, all at once.
		if settings != nil {
			faults = []error{validate.CombineUncovered(validate.Combine(faults...), validate.CampaignSettings(in))}
		}
		return in, nil, validate.Combine(append(faults, err, errs.Err())...)
	}
	in.Recipients, in.FromCSV = rows, true
	return in, validate.Combine(append(faults, errs.Err())...), nil
}

// handleCampaignShow: GET /api/v1/campaigns/{campaign_id} — with its counts.
func (s *Server) handleCampaignShow(w http.ResponseWriter, r *http.Request) error {
	c, err := s.svc.Campaigns.Campaign(r.Context(), mux.Vars(r)["campaign_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, c, nil)
}

// handleCampaignDelete: DELETE /api/v1/campaigns/{campaign_id} — 204; a finished
// campaign only.
func (s *Server) handleCampaignDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Campaigns.DeleteCampaign(r.Context(), mux.Vars(r)["campaign_id"]); err != nil {
		return err
	}
	return writeNoContent(w)
}

// handleCampaignRecipients: GET /api/v1/campaigns/{campaign_id}/recipients?state= — each
// with its attempts and their calls. The parameters' faults go to the service, which
// adds its own in one 422.
func (s *Server) handleCampaignRecipients(w http.ResponseWriter, r *http.Request) error {
	req, pageErr := pageRequest(r)
	f, filterErr := validate.RecipientFilterParams(r.URL.Query())
	ctx := data.WithInputFaults(r.Context(), validate.Combine(pageErr, filterErr))
	list, page, err := s.svc.Campaigns.Recipients(ctx, mux.Vars(r)["campaign_id"], f, req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleCampaignPause: POST /api/v1/campaigns/{campaign_id}/pause — 200 with the campaign.
func (s *Server) handleCampaignPause(w http.ResponseWriter, r *http.Request) error {
	return s.campaignMove(w, r, s.svc.Campaigns.PauseCampaign)
}

// handleCampaignResume: POST /api/v1/campaigns/{campaign_id}/resume — 200 with the campaign.
func (s *Server) handleCampaignResume(w http.ResponseWriter, r *http.Request) error {
	return s.campaignMove(w, r, s.svc.Campaigns.ResumeCampaign)
}

// handleCampaignCancel: POST /api/v1/campaigns/{campaign_id}/cancel — 200 with the campaign.
func (s *Server) handleCampaignCancel(w http.ResponseWriter, r *http.Request) error {
	return s.campaignMove(w, r, s.svc.Campaigns.CancelCampaign)
}

// campaignMove applies move to the route's campaign and answers it.
func (s *Server) campaignMove(w http.ResponseWriter, r *http.Request, move func(context.Context, string) (*data.Campaign, error)) error {
	c, err := move(r.Context(), mux.Vars(r)["campaign_id"])
	if err != nil {
		return err
	}
	return writeRecord(w, http.StatusOK, c, nil)
}

// handleDialClaim: POST /api/v1/dial-tasks/claim — 200 {"data": {tasks, next_due_at}}:
// each task with the call-start answer of its call, credentials in clear.
func (s *Server) handleDialClaim(w http.ResponseWriter, r *http.Request) error {
	var in data.DialClaim
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	a, err := s.svc.Campaigns.ClaimDialTasks(ctx, in)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store") // credentials: no cache keeps them
	writeJSON(w, http.StatusOK, map[string]any{"data": a})
	return nil
}

// handleSuppressionList: GET /api/v1/suppressions.
func (s *Server) handleSuppressionList(w http.ResponseWriter, r *http.Request) error {
	req, err := pageRequest(r)
	if err != nil {
		return err
	}
	list, page, err := s.svc.Suppressions.Suppressions(r.Context(), req)
	if err != nil {
		return err
	}
	return writeList(w, list, page)
}

// handleSuppressionAdd: POST /api/v1/suppressions — 201, or 200 with the entry already
// listed for the number.
func (s *Server) handleSuppressionAdd(w http.ResponseWriter, r *http.Request) error {
	var in data.SuppressionCreate
	ctx, err := decodeInput(r, &in)
	if err != nil {
		return err
	}
	e, added, err := s.svc.Suppressions.AddSuppression(ctx, in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if added {
		status = http.StatusCreated
	}
	return writeRecord(w, status, e, nil)
}

// handleSuppressionImport: POST /api/v1/suppressions/import — a CSV (phone_number column,
// optional reason) as text/csv or as a multipart file part, or JSON {rows}; every row or
// none.
func (s *Server) handleSuppressionImport(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var rows []data.SuppressionCreate
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		var in data.SuppressionRows
		var err error
		if ctx, err = decodeInput(r, &in); err != nil {
			return err
		}
		rows = in.Rows
	} else {
		body, err := s.readCSVUpload(r)
		if err != nil {
			return err
		}
		if rows, err = readSuppressionsCSV(bytes.NewReader(body)); err != nil {
			return err
		}
		ctx = data.WithInputFaults(ctx, queryFaults(r))
	}
	res, err := s.svc.Suppressions.ImportSuppressions(ctx, rows)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": res})
	return nil
}

// readCSVUpload returns a CSV sent as the body (text/csv) or as a multipart file part.
func (s *Server) readCSVUpload(r *http.Request) ([]byte, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "text/csv":
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, bodyReadError(err, s.cfg.MaxFileSize)
		}
		return b, nil
	case "multipart/form-data":
		mr, err := r.MultipartReader()
		if err != nil {
			return nil, data.Errorf(data.EMALFORMED, "The multipart body cannot be read: %v.", err)
		}
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil, data.FieldError("file", "The file part (a CSV with a phone_number column) is required.")
			}
			if err != nil {
				return nil, bodyReadError(err, s.cfg.MaxFileSize)
			}
			if part.FormName() == "file" {
				b, err := readPart(part, s.cfg.MaxFileSize)
				if err != nil {
					return nil, partError(err, "file", s.cfg.MaxFileSize, s.cfg.MaxFileSize)
				}
				return b, nil
			}
			if _, err := io.Copy(io.Discard, part); err != nil {
				return nil, bodyReadError(err, s.cfg.MaxFileSize)
			}
		}
	}
	return nil, data.Errorf(data.EMEDIATYPE, "Send the list as text/csv, as a multipart/form-data file part, or as JSON {\"rows\": [...]}.")
}

// handleSuppressionDelete: DELETE /api/v1/suppressions/{suppression_id} — 204.
func (s *Server) handleSuppressionDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Suppressions.DeleteSuppression(r.Context(), mux.Vars(r)["suppression_id"]); err != nil {
		return err
	}
	return writeNoContent(w)
}
