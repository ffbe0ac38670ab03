package service

// The workspace-level members of an export added after its first version (docs/
// export-import.md): the suppression list, the embedding provider and the price table.
// Each is optional in a document, so an older one still imports.

import (
	"context"
	"fmt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// exportSuppressions adds the workspace's suppression list, oldest first, without ids.
func exportSuppressions(tx Tx, ws string, st *exportStream) error {
	list, err := all(func(req data.PageRequest) ([]*data.Suppression, data.Page, error) {
		return tx.Suppressions(ws, req)
	})
	if err != nil {
		return err
	}
	for _, e := range list {
		st.doc.Suppressions = append(st.doc.Suppressions, data.ExportSuppression{PhoneNumber: e.PhoneNumber, Reason: e.Reason, CreatedAt: e.CreatedAt})
	}
	return nil
}

// importSuppressions adds the document's suppression list (its numbers checked and in
// E.164 in plan.suppressions) to the target's, as an import of the list adds rows: a
// number already listed keeps its entry. Each entry keeps the date it was put on the list;
// one without a date gets now.
func (s *ExportService) importSuppressions(tx Tx, doc *data.WorkspaceExport, plan *importPlan, now data.Time) (data.SuppressionImport, error) {
	if len(doc.Suppressions) == 0 {
		return data.SuppressionImport{}, nil
	}
	entries := make([]*data.Suppression, len(doc.Suppressions))
	for i, in := range doc.Suppressions {
		created := in.CreatedAt
		if created.IsZero() {
			created = now
		}
		entries[i] = &data.Suppression{ID: s.ids.New(data.PrefixSuppression), WorkspaceID: plan.ws,
			PhoneNumber: plan.suppressions[i], Reason: in.Reason, CreatedAt: created}
	}
	out, err := addSuppressions(tx, entries, "suppressions", s.suppressionBound())
	if err != nil {
		return data.SuppressionImport{}, err
	}
	return *out, nil
}

// exportEmbeddings is the workspace's embedding provider as an export holds it: its
// api_key opened from its sealed form, masked unless the export includes secrets.
func (s *ExportService) exportEmbeddings(ws *data.WorkspaceRecord, opts data.ExportOptions) (*data.WorkspaceEmbeddings, error) {
	out := ws.Embeddings.Shown()
	out.APIKey = nil
	if ws.EmbeddingsKey != "" {
		plain, err := s.sealer.Open(ws.EmbeddingsKey)
		if err != nil {
			return nil, fmt.Errorf("opening embeddings.api_key: %w", err)
		}
		if !opts.IncludeSecrets {
			plain = data.MaskSecret(plain)
		}
		out.APIKey = &plain
	}
	return &out, nil
}

// importedEmbeddings is the document's embedding provider as an import sets it: a masked
// api_key is not a key, and becomes null (reported in missing_secrets).
func importedEmbeddings(e data.WorkspaceEmbeddings) (data.WorkspaceEmbeddings, bool) {
	if e.APIKey != nil && data.IsMaskedSecret(*e.APIKey) {
		e.APIKey = nil
		return e, true
	}
	return e, false
}

// checkImportSettings checks the document's workspace settings whose rules need the
// service (the embedding provider's address goes through the operator's URL guard) into
// errs, under their document paths.
func (s *ExportService) checkImportSettings(doc *data.WorkspaceExport, errs *validate.Errors) {
	if e := doc.Workspace.Embeddings; e != nil {
		given, _ := importedEmbeddings(*e)
		errs.Nest("workspace", validate.WorkspaceEmbeddings(given, s.urlGuard))
	}
}

// importEmbeddings sets w's embedding provider from the document's (checked by
// checkImportSettings) through the workspace update's own path, and reports whether the
// workspace's knowledge bases must be embedded again.
func (s *ExportService) importEmbeddings(tx Tx, w *data.WorkspaceRecord, doc *data.WorkspaceExport, plan *importPlan) (bool, error) {
	e := doc.Workspace.Embeddings
	if e == nil {
		return false, nil
	}
	given, masked := importedEmbeddings(*e)
	if masked {
		plan.missing = append(plan.missing, "workspace.embeddings.api_key")
	}
	return s.applyEmbeddings(tx, w, data.WorkspaceEmbeddingsPatch{
		BaseURL: data.Some(given.BaseURL), Model: data.Some(given.Model), APIKey: data.Some(given.APIKey),
		VectorShare: data.Some(given.VectorShare), Enabled: data.Some(given.IsEnabled())})
}

// exportPriceTable is the workspace's price table as PUT /api/v1/price-table takes it;
// nil when the workspace never set one, so that an import leaves the target's.
func exportPriceTable(tx Tx, ws string) (*data.PriceTableSet, error) {
	t, err := tx.PriceTable(ws)
	if err != nil || t == nil {
		return nil, err
	}
	out := &data.PriceTableSet{Currency: t.Currency, Prices: make([]data.PriceSet, len(t.Prices))}
	for i, p := range t.Prices {
		out.Prices[i] = data.PriceSet{Provider: p.Provider, Model: p.Model, Unit: p.Unit, Price: ptrTo(p.Price)}
	}
	return out, nil
}

// importPriceTable sets the target's price table from the document's (checked with the
// rest of it) as the price table route does, price_table.updated included.
func (s *ExportService) importPriceTable(ctx context.Context, tx Tx, doc *data.WorkspaceExport, ws string) error {
	if doc.Workspace.PriceTable == nil {
		return nil
	}
	_, err := s.storePriceTable(ctx, tx, ws, *doc.Workspace.PriceTable)
	return err
}
