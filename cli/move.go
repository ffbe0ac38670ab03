package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/seal"
	"github.com/voiceapi/voiceapi/service"
)

// moveInstallation copies the stopped bbolt installation in dir into the PostgreSQL
// database of loc (migrated first), with a spinner counting records on a terminal, and
// prints what it copied.
func moveInstallation(cmd *cobra.Command, dir string, loc *location) error {
	if err := requireDatabase(dir); err != nil {
		return fmt.Errorf("--from-data: %w", err) // before the key: a mistyped dir has no key file either
	}
	if err := refuseOtherKey(dir); err != nil {
		return err
	}
	log := adminLogger(cmd.ErrOrStderr())
	src, err := openForAdmin(dir, log)
	if err != nil {
		return fmt.Errorf("--from-data: %w", err)
	}
	defer src.Close()
	// The moved credentials stay readable only under the key they were sealed with: the
	// database takes the installation's key, from the same place the server took it.
	moved := *loc
	moved.dir = dir
	dst, err := moved.openPostgres(cmd.Context(), postgres.Options{SecretKey: src.Options().SecretKey, Logger: log})
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

// refuseOtherKey stops a move whose VOICEAPI_SECRET_KEY is not the installation's own
// secret.key. The key in force wins, so the move succeeded and then the database was
// set up with a key that opens none of the moved credentials and under which the audit
// chain reads as edited: docs/scale-out.md has the operator export a new key for the
// replicas just before, a natural way to meet it. Without a key file the node ran with
// the variable, which the move then needs: opening the file without either made a new
// random key file, and the database was set up with that.
func refuseOtherKey(dir string) error {
	env := os.Getenv("VOICEAPI_SECRET_KEY")
	path := filepath.Join(dir, seal.KeyFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && strings.TrimSpace(env) == "" {
		return fmt.Errorf("--from-data: %s has no %s and VOICEAPI_SECRET_KEY is unset: the node ran with VOICEAPI_SECRET_KEY, "+
			"which sealed its credentials and keyed its audit chain; set it to that key for the move and for the replicas", dir, seal.KeyFile)
	}
	if strings.TrimSpace(env) == "" || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil { // a key file there that cannot be compared: the move would pass it over
		return fmt.Errorf("--from-data: reading %s to compare it with VOICEAPI_SECRET_KEY: %w", path, err)
	}
	envKey, err := seal.ParseKey(env)
	if err != nil {
		return fmt.Errorf("VOICEAPI_SECRET_KEY: %w", err)
	}
	if fileKey, err := seal.ParseKey(string(raw)); err != nil || bytes.Equal(envKey, fileKey) {
		return nil
	}
	return fmt.Errorf("VOICEAPI_SECRET_KEY is not the key in %s, which sealed this installation's credentials and keyed its audit chain: "+
		"unset VOICEAPI_SECRET_KEY for the move (the database then takes the file's key) and start the replicas with VOICEAPI_SECRET_KEY=$(cat %s); "+
		"if the node ran with this VOICEAPI_SECRET_KEY instead, move the stale %s out of %s first", path, path, seal.KeyFile, dir)
}
