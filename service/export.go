package service

import (
	"context"

	"github.com/voiceapi/voiceapi/data"
)

// ExportService implements data.WorkspaceExportService: a whole workspace out as one
// document, or one document in as new records (conventions §17), each recorded in the
// workspace's audit log (workspace.exported, workspace.imported).
//
// The storage still reads and writes the records itself (bolt's ExportWorkspace and
// ImportWorkspace) until the agents, knowledge bases and numbers it writes have their
// storage methods here; the service records the events.
type ExportService struct {
	*base
	// storage reads and writes the records of an export; nil when the store cannot.
	storage workspaceImporter
}

// workspaceImporter is the storage's export and import of records (bolt's), with the
// import running a function of the service in its transaction.
type workspaceImporter interface {
	data.WorkspaceExportService
	// ImportWorkspaceThen is ImportWorkspace running then in the import's write
	// transaction, after every record is written.
	ImportWorkspaceThen(ctx context.Context, workspaceID string, doc *data.WorkspaceExport, opts data.ImportOptions,
		then func(Tx, *data.ImportResult) error) (*data.ImportResult, error)
}

var _ data.WorkspaceExportService = (*ExportService)(nil)

// newExportService takes the export and import of records from store when it has them.
func newExportService(b *base, store Store) *ExportService {
	storage, _ := store.(workspaceImporter)
	return &ExportService{base: b, storage: storage}
}

// exportedEvent is the data of a workspace.exported event: how much left and whether the
// agents' api_keys left in the clear, never any of them.
type exportedEvent struct {
	IncludeSecrets bool `json:"include_secrets"`
	data.ExportCounts
}

// errNoExports answers when the store cannot export.
func errNoExports() error {
	return data.Errorf(data.ENOTFOUND, "Workspace export is not available on this server.")
}

// ExportWorkspace implements data.WorkspaceExportService. The event is recorded once the
// records are read and before any is written out, so no export leaves without it.
func (s *ExportService) ExportWorkspace(ctx context.Context, workspaceID string, opts data.ExportOptions) (data.ExportStream, error) {
	if s.storage == nil {
		return nil, errNoExports()
	}
	stream, err := s.storage.ExportWorkspace(ctx, workspaceID, opts)
	if err != nil {
		return nil, err
	}
	ev := exportedEvent{IncludeSecrets: opts.IncludeSecrets, ExportCounts: stream.Counts()}
	err = s.store.Update(ctx, func(tx Tx) error {
		_, err := s.record(ctx, tx, data.EventWorkspaceExported, workspaceID, ev)
		return err
	})
	if err != nil {
		stream.Close()
		return nil, err
	}
	return stream, nil
}

// ImportWorkspace implements data.WorkspaceExportService. The event is recorded in the
// import's transaction; its data is the result as the client sees it, without the new
// webhook secrets (ImportResult never encodes them).
func (s *ExportService) ImportWorkspace(ctx context.Context, workspaceID string, doc *data.WorkspaceExport, opts data.ImportOptions) (*data.ImportResult, error) {
	if s.storage == nil {
		return nil, errNoExports()
	}
	return s.storage.ImportWorkspaceThen(ctx, workspaceID, doc, opts, func(tx Tx, res *data.ImportResult) error {
		_, err := s.record(ctx, tx, data.EventWorkspaceImported, workspaceID, res)
		return err
	})
}
