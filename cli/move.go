package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/service"
)

// moveInstallation copies the stopped bbolt installation in dir into the PostgreSQL
// database of loc (migrated first), with a spinner counting records on a terminal, and
// prints what it copied.
func moveInstallation(cmd *cobra.Command, dir string, loc *location) error {
	src, err := openForAdmin(dir)
	if err != nil {
		return fmt.Errorf("--from-data: %w", err)
	}
	defer src.Close()
	// The moved credentials stay readable only under the key they were sealed with: the
	// database takes the installation's key, from the same place the server took it.
	moved := *loc
	moved.dir = dir
	dst, err := moved.openPostgres(cmd.Context(), postgres.Options{SecretKey: src.Options().SecretKey})
	if err != nil {
		return err
	}
	defer dst.Close()
	bar := newSpinner(cmd.ErrOrStderr(), "moving records")
	counts, err := service.MoveInstallation(cmd.Context(), src, dst, func(string, int) {
		if bar.bar != nil {
			bar.bar.Add(1)
		}
	})
	bar.Done()
	if err != nil {
		return fmt.Errorf("moving %s into PostgreSQL: %w", dir, err)
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "moved %s into PostgreSQL: %s\n", dir, strings.Join(parts, ", "))
	fmt.Fprintln(cmd.OutOrStdout(), "start the servers with --database-url and the same secret key (VOICEAPI_SECRET_KEY, or this directory's secret.key as --data)")
	return nil
}
