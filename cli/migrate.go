package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/postgres"
)

// NewMigrateCommand builds `voiceapi migrate`: the PostgreSQL schema brought to this
// binary's version (servers also migrate at start; this is for deploys that migrate
// first and start replicas with --no-migrate), or a whole single-node installation
// moved into PostgreSQL with --from-data.
func NewMigrateCommand() *cobra.Command {
	var loc location
	var status bool
	var fromData string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Bring a PostgreSQL database's schema to this version, or move a bbolt installation into PostgreSQL",
		Long: `Applies the schema migrations embedded in this binary to the PostgreSQL database named by
--database-url (or VOICEAPI_DATABASE_URL), under an advisory lock so that replicas starting
at the same time migrate once. With --status it only reports the versions.

With --from-data DIR it also copies every record of the stopped single-node installation in
DIR (users, keys, workspaces, agents and their versions, numbers, calls, knowledge bases
and their files, webhooks and pending deliveries, the audit chain) into the database, which
must hold no records yet.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !loc.postgres() {
				return errors.New("migrate needs --database-url (or VOICEAPI_DATABASE_URL): the bbolt file migrates itself when a server opens it")
			}
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			if fromData != "" {
				return moveInstallation(cmd, fromData, &loc)
			}
			pool, err := pgxpool.New(ctx, loc.url)
			if err != nil {
				return fmt.Errorf("--database-url: %w", err)
			}
			defer pool.Close()
			all, err := postgres.Migrations()
			if err != nil {
				return err
			}
			if status {
				v, err := postgres.SchemaVersion(ctx, pool)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "schema version %d, this voiceapi's %d\n", v, postgres.LatestVersion(all))
				return nil
			}
			names := make(map[int]string, len(all))
			for _, m := range all {
				names[m.Version] = m.Name
			}
			applied, err := postgres.MigrateWithWaits(ctx, pool, func(waited time.Duration) {
				fmt.Fprintf(cmd.ErrOrStderr(), "waiting for the writes under way on every replica to end (%s so far); writes wait meanwhile\n",
					waited.Round(time.Second))
			})
			for _, v := range applied {
				fmt.Fprintf(out, "applied %04d_%s\n", v, names[v])
			}
			if err != nil {
				return err
			}
			if len(applied) == 0 {
				fmt.Fprintf(out, "schema already at version %d\n", postgres.LatestVersion(all))
			}
			return nil
		},
	}
	loc.register(cmd.Flags())
	cmd.Flags().BoolVar(&status, "status", false, "only print the database's schema version and this binary's")
	cmd.Flags().StringVar(&fromData, "from-data", "", "also copy the stopped bbolt installation in this data directory into the database")
	return cmd
}
