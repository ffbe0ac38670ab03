package service

// The workspace-level members of an export added after its first version (docs/
// export-import.md): the suppression list, the embedding provider and the price table.
// Each is optional in a document, so an older one still imports.

import (
	"github.com/voiceapi/voiceapi/data"
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
	out, err := addSuppressions(tx, entries)
	if err != nil {
		return data.SuppressionImport{}, err
	}
	return *out, nil
}
