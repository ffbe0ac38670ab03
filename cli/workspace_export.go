package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/strictjson"
)

// secretsWarning is printed when an export holds credentials in the clear.
const secretsWarning = `note: the export holds llm_config.api_key values in the clear (--include-secrets).
  Treat the file like a password: keep it out of git and delete it after the move.`

// newWorkspaceExportCommand builds `voiceapi workspace export`.
func newWorkspaceExportCommand() *cobra.Command {
	var wsID, out string
	var loc location
	var secrets, force bool
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export a workspace as one JSON document (docs/export-import.md)",
		Long: `Export a workspace of a stopped server's data: its agents with their versions, its
knowledge bases with their sources (files included), its numbers and its webhooks
(without their secrets), as the JSON document GET /api/v1/workspaces/{id}/export returns.
Provider API keys are masked unless --include-secrets is given.`,
		Args: cobra.NoArgs,
		RunE: withAdminDB(&loc, func(cmd *cobra.Command, db Backend) error {
			stream, err := NewServices(db).Exports.ExportWorkspace(cmd.Context(), wsID, data.ExportOptions{IncludeSecrets: secrets})
			if err != nil {
				return err
			}
			defer stream.Close()
			bar := newProgress(cmd.ErrOrStderr(), -1, "writing the document")
			if out == "-" {
				_, err = stream.WriteTo(bar.Writer(cmd.OutOrStdout()))
			} else {
				err = writeFileAtomically(out, force, func(w io.Writer) error {
					_, err := stream.WriteTo(bar.Writer(w))
					return err
				})
			}
			bar.Done()
			if err != nil {
				return err
			}
			if secrets {
				fmt.Fprintln(cmd.ErrOrStderr(), secretsWarning)
			}
			return nil
		}),
	}
	loc.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&wsID, "workspace", "", "id of the workspace to export (required)")
	f.StringVar(&out, "out", "-", `file to write (mode 0600), or "-" for standard output`)
	f.BoolVar(&force, "force", false, "replace the --out file if it exists")
	consentFlag(f, "force")
	f.BoolVar(&secrets, "include-secrets", false, "export llm_config.api_key in the clear (for a private move between instances)")
	consentFlag(f, "include-secrets")
	cmd.MarkFlagRequired("workspace")
	return cmd
}

// newWorkspaceImportCommand builds `voiceapi workspace import`.
func newWorkspaceImportCommand() *cobra.Command {
	var wsID, in string
	var loc location
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Import a workspace document into an existing workspace (docs/export-import.md)",
		Long: `Import a document made by 'voiceapi workspace export' or the export endpoint into an
existing workspace of a stopped server's data, all or nothing. Every fault of the document
is reported at once and nothing is stored. Each imported webhook gets a new signing
secret, printed once. URL sources are fetched when the server next starts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := readImportFile(cmd, in)
			if err != nil {
				return err
			}
			// What follows has nothing to count: a spinner shows it is still working.
			bar := newSpinner(cmd.ErrOrStderr(), "checking and importing")
			defer bar.Done()
			var doc data.WorkspaceExport
			if err := strictjson.Decode(raw, &doc); err != nil {
				return describe(err)
			}
			db, err := loc.openAdmin(cmd)
			if err != nil {
				return err
			}
			defer db.Close()
			res, err := NewServices(db).Exports.ImportWorkspace(cmd.Context(), wsID, &doc, data.ImportOptions{})
			bar.Done()
			if err != nil {
				return describe(err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "imported into %s: %d agents, %d knowledge bases, %d numbers, %d webhooks, %d suppressed numbers added (%d listed already)\n",
				res.WorkspaceID, len(res.Agents), len(res.KnowledgeBases), len(res.Numbers), len(res.Webhooks),
				res.Suppressions.Added, res.Suppressions.Duplicates)
			for _, s := range res.WebhookSecrets {
				fmt.Fprintf(w, "webhook %s %s secret %s\n", s.WebhookID, s.URL, s.Secret)
			}
			for _, p := range res.MissingSecrets {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s came masked and was imported as null; set it again before relying on it\n", p)
			}
			return nil
		},
	}
	loc.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&wsID, "workspace", "", "id of the workspace to import into (required)")
	f.StringVar(&in, "in", "", `document to read, or "-" for standard input (required)`)
	cmd.MarkFlagRequired("workspace")
	cmd.MarkFlagRequired("in")
	return cmd
}

// readImportFile reads the document, with a bar on a terminal.
func readImportFile(cmd *cobra.Command, in string) ([]byte, error) {
	var r io.Reader = cmd.InOrStdin()
	size := int64(-1)
	if in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return nil, fmt.Errorf("--in %s: %w", in, err)
		}
		defer f.Close()
		r, size = f, fileSize(f)
	}
	bar := newProgress(cmd.ErrOrStderr(), size, "reading the document")
	defer bar.Done()
	return io.ReadAll(bar.Reader(r))
}
