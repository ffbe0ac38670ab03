package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// moveInstallation copies a stopped bbolt installation into PostgreSQL.
func moveInstallation(cmd *cobra.Command, dir string, loc *location) error {
	return errors.New("--from-data: not built yet")
}
