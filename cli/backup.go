package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
)

// keyWarning is printed whenever a backup or restore concerns the secret key: it is what
// decrypts the stored credentials, so its handling decides what a backup is worth.
const keyWarning = `note: the archive holds secret.key, the key that decrypts stored credentials
  (provider API keys, webhook secrets). Anyone with the archive can
  read them: store it encrypted and with restricted access, or back up with
  --exclude-secret-key and keep the key separately.`

const noKeyWarning = `warning: the archive holds no secret.key. Credentials in the restored database decrypt
  only with the original key: put it in the data directory as secret.key, or set
  VOICEAPI_SECRET_KEY, before starting the server.`

// NewBackupCommand builds `voiceapi backup`.
func NewBackupCommand() *cobra.Command {
	var out string
	var loc location
	var excludeKey, force bool
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Back up a stopped server's data directory to a tar.gz archive",
		Long: `Back up a stopped server's data directory: a consistent copy of the database, every
stored file under files/ and secret.key, packed as tar.gz with a manifest of SHA-256
checksums. For a running server, use GET /api/v1/admin/backup (instance admins).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := loc.boltOnly("backup", "back up PostgreSQL with its own tools: pg_dump (a logical copy) or continuous archiving for point-in-time recovery (docs/scale-out.md), and keep the secret key (VOICEAPI_SECRET_KEY) with them"); err != nil {
				return err
			}
			if err := requireDatabase(loc.dir); err != nil {
				return err
			}
			dir := loc.dir
			opts := data.BackupOptions{ExcludeSecretKey: excludeKey}
			// The compressed size is known only at the end: a spinner counts the bytes.
			bar := newProgress(cmd.ErrOrStderr(), -1, "writing the archive")
			if out == "-" {
				m, err := bolt.BackupStopped(dir, bar.Writer(cmd.OutOrStdout()), opts)
				bar.Done()
				if err == nil {
					reportBackup(cmd.ErrOrStderr(), "standard output", m)
				}
				return err
			}
			var m *bolt.Manifest
			err := writeFileAtomically(out, force, func(w io.Writer) (err error) {
				m, err = bolt.BackupStopped(dir, bar.Writer(w), opts)
				return err
			})
			bar.Done()
			if err != nil {
				return err
			}
			reportBackup(cmd.ErrOrStderr(), out, m)
			return nil
		},
	}
	loc.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&out, "out", "", `archive to write (mode 0600), or "-" for standard output (required)`)
	f.BoolVar(&excludeKey, "exclude-secret-key", false, "leave secret.key out of the archive (keep it safe separately)")
	f.BoolVar(&force, "force", false, "replace the --out file if it exists (atomically: the old archive stays whole until the new one is complete)")
	consentFlag(f, "force")
	cmd.MarkFlagRequired("out")
	return cmd
}

func reportBackup(w io.Writer, where string, m *bolt.Manifest) {
	var size int64
	for _, mm := range m.Members {
		size += mm.Size
	}
	fmt.Fprintf(w, "backed up %d files (%d bytes before compression, schema version %d) to %s\n", len(m.Members), size, m.SchemaVersion, where)
	if m.SecretKeyIncluded {
		fmt.Fprintln(w, keyWarning)
	} else {
		fmt.Fprintln(w, noKeyWarning)
	}
}

// NewRestoreCommand builds `voiceapi restore`.
func NewRestoreCommand() *cobra.Command {
	var in string
	var loc location
	var force bool
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Restore a backup archive into an empty data directory",
		Long: `Restore a backup made by 'voiceapi backup' or GET /api/v1/admin/backup into a data
directory that is empty or does not exist (--force replaces the database, secret.key and
files/ of a non-empty one; the server must be stopped). Every member is checked against
the manifest's SHA-256 and the database against bbolt's consistency check before
anything is moved into place. Schema migrations run when the server next starts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := loc.boltOnly("restore", "restore PostgreSQL with pg_restore or point-in-time recovery (docs/scale-out.md)"); err != nil {
				return err
			}
			dir := loc.dir
			var r io.Reader = cmd.InOrStdin()
			size := int64(-1)
			if in != "-" {
				f, err := os.Open(in)
				if err != nil {
					return fmt.Errorf("--in %s: %w", in, err)
				}
				defer f.Close()
				r, size = f, fileSize(f)
			}
			bar := newProgress(cmd.ErrOrStderr(), size, "reading the archive")
			m, err := bolt.Restore(dir, bar.Reader(r), bolt.RestoreOptions{Force: force})
			bar.Done()
			if errors.Is(err, io.ErrUnexpectedEOF) {
				// The bare "unexpected EOF" of a cut download said neither what nor whether
				// anything had changed.
				return fmt.Errorf("the archive ends early, truncated (an interrupted download or copy?): take or fetch it again; nothing was restored into %s (%w)", dir, err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "restored %d files of a backup taken %s (schema version %d) into %s\n",
				len(m.Members), m.CreatedAt.Format(data.TimeLayout), m.SchemaVersion, dir)
			if !m.SecretKeyIncluded {
				fmt.Fprintln(cmd.ErrOrStderr(), noKeyWarning)
			}
			return nil
		},
	}
	loc.register(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&in, "in", "", `archive to read, or "-" for standard input (required)`)
	f.BoolVar(&force, "force", false, "restore into a non-empty data directory, replacing its data")
	consentFlag(f, "force")
	cmd.MarkFlagRequired("in")
	return cmd
}
