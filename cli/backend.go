package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/seal"
	"github.com/voiceapi/voiceapi/service"
)

// Backend is an open storage engine (bbolt in a data directory, or PostgreSQL) and what
// the commands need of it besides transactions.
type Backend interface {
	service.Store
	// ServiceOptions are the service layer's options the engine was opened with: clock,
	// sealer, catalog, logger, bcrypt cost, login lifetime, id generator.
	ServiceOptions() service.Options
	Catalog() *data.Catalog
	// Ping reports whether the storage answers (readiness).
	Ping(ctx context.Context) error
	// SetEventHook sets what runs after a commit that queued events or deliveries.
	SetEventHook(fn func())
	Close() error
}

var (
	_ Backend = (*bolt.DB)(nil)
	_ Backend = (*postgres.DB)(nil)
)

// location says where the records are: a data directory (bbolt, the default) or a
// PostgreSQL database, with the pool size for the latter.
type location struct {
	dir      string
	url      string
	poolSize int32
}

// register adds --data, --database-url and --db-pool-size to a command's flags.
func (l *location) register(f *pflag.FlagSet) {
	dataFlag(f, &l.dir)
	f.StringVar(&l.url, "database-url", "", "PostgreSQL connection URL (postgres://user:password@host:5432/db); when set, records live there instead of in --data, which then only holds the secret key file unless VOICEAPI_SECRET_KEY is set")
	f.Int32Var(&l.poolSize, "db-pool-size", 0, "most PostgreSQL connections this process opens (0: pgx's default, the larger of 4 and the number of CPUs)")
}

// postgres reports whether the location is a PostgreSQL database.
func (l *location) postgres() bool { return l.url != "" }

// describe names the location for logs.
func (l *location) describe() string {
	if l.postgres() {
		return "postgresql"
	}
	return l.dir
}

// openPostgres opens the PostgreSQL engine with the options shared by every command.
func (l *location) openPostgres(ctx context.Context, o postgres.Options) (*postgres.DB, error) {
	if l.poolSize < 0 {
		return nil, errors.New("--db-pool-size must be 0 (the default) or more")
	}
	o.URL, o.MaxConns, o.DataDir = l.url, l.poolSize, l.dir
	if o.PasswordCost == 0 {
		o.PasswordCost = adminOptions.PasswordCost
	}
	if o.SecretKey != nil || os.Getenv("VOICEAPI_SECRET_KEY") != "" {
		return postgres.Open(ctx, o)
	}
	// The key file lives in --data, made on the first start like bbolt's.
	if err := makeDir(l.dir, 0o700); err != nil {
		return nil, notPermitted(l.dir, fmt.Errorf("creating data directory for the key file: %w", err))
	}
	key, fresh, err := seal.LoadKeyFile(ctx, l.dir)
	if err != nil {
		return nil, err
	}
	o.SecretKey = key
	db, err := postgres.Open(ctx, o)
	if fresh == nil {
		return db, err
	}
	// A key this start made that the database refused, or that never reached it (an
	// unreachable server), is no one's: left in --data, every later start would take it
	// for the installation's. The key lock, held since the file was made, kept every other
	// process from reading it meanwhile. A key the database took, or may have taken (a
	// failure while its check value was being stored), is kept: removing it could lose
	// the key of every credential sealed with it.
	refused := errors.Is(err, postgres.ErrKeyMismatch)
	if !refused && !(errors.Is(err, postgres.ErrKeyNotOffered) && fresh.Guarded()) {
		fresh.Keep()
		return db, err
	}
	if rmErr := fresh.Remove(); rmErr != nil {
		return nil, fmt.Errorf("%w; removing the key file this start created: %v", err, rmErr)
	}
	return nil, fmt.Errorf("%w (the new %s this start created is removed again)", err, filepath.Join(l.dir, seal.KeyFile))
}

// openAdmin opens the location for the one-shot command cmd: bbolt fails within seconds
// with a clear message when a server holds the file; PostgreSQL is shared with running
// servers. What the engine logs goes to cmd's standard error as plain lines.
func (l *location) openAdmin(cmd *cobra.Command) (Backend, error) {
	log := adminLogger(cmd.ErrOrStderr())
	if l.postgres() {
		return l.openPostgres(cmd.Context(), postgres.Options{Logger: log})
	}
	return openForAdmin(l.dir, log)
}

// openAdminMayCreate is openAdmin for `user create`, the one admin command that may make
// the database in an existing, empty data directory: an administrator provisioned before
// the first start.
func (l *location) openAdminMayCreate(cmd *cobra.Command) (Backend, error) {
	log := adminLogger(cmd.ErrOrStderr())
	if l.postgres() {
		return l.openPostgres(cmd.Context(), postgres.Options{Logger: log})
	}
	if _, err := os.Stat(filepath.Join(l.dir, bolt.FileName)); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(l.dir); err == nil {
			return bolt.Open(l.dir, adminOpenOptions(log))
		}
	}
	return openForAdmin(l.dir, log)
}

// makeDir makes the key file's directory; a test makes it refuse as the file system does
// a user other than root, which a test run as root never sees.
var makeDir = os.MkdirAll

// boltOnly refuses a command that works on the bbolt file itself when the records are in
// PostgreSQL, saying what to use instead.
func (l *location) boltOnly(command, instead string) error {
	if l.postgres() {
		return fmt.Errorf("%s works on a bbolt data directory; with --database-url the records are in PostgreSQL: %s", command, instead)
	}
	return nil
}

// openForAdmin opens the bbolt database for a one-shot command: it fails within seconds
// with a clear message when a server holds it. What it logs goes to log.
func openForAdmin(dir string, log *slog.Logger) (*bolt.DB, error) {
	if err := requireDatabase(dir); err != nil {
		return nil, err
	}
	db, err := bolt.Open(dir, adminOpenOptions(log))
	return db, notPermitted(dir, err)
}

// notPermitted adds the next step to a refusal by the file system: "opening X: open X:
// permission denied" said what but not as whom to run.
// A directory that does not exist yet has no owner to run as: the refusal was to make
// it, so the next step is to make it for the service's user.
func notPermitted(dir string, err error) error {
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	if _, statErr := os.Stat(dir); errors.Is(statErr, fs.ErrNotExist) {
		return fmt.Errorf("%w: create %s for the user that runs voiceapi first (sudo install -d -o voiceapi -g voiceapi -m 0700 %s), then run it as that user", err, dir, dir)
	}
	return fmt.Errorf("%w: run it as the user that owns %s (the service's: sudo -u voiceapi voiceapi …)", err, dir)
}

// requireDatabase fails, saying what to give instead, unless dir holds a database. An
// admin command given an existing directory without one (a mistyped --data, a fresh
// volume) created a database there and reported success: `user create` made a user on a
// database no server reads.
func requireDatabase(dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data directory %s does not exist: name the server's data directory with --data DIR (or VOICEAPI_DATA); `voiceapi serve` creates it on its first start", dir)
	} else if err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, bolt.FileName)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data directory %s holds no database (%s): name the server's data directory with --data DIR (or VOICEAPI_DATA); `voiceapi serve` creates the database on its first start", dir, bolt.FileName)
	} else if err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	return nil
}

// adminOptions open the database for one-shot commands; tests lower the bcrypt cost.
var adminOptions = bolt.Options{LockTimeout: 2 * time.Second}

// adminOpenOptions are adminOptions with log for what the engine logs.
func adminOpenOptions(log *slog.Logger) bolt.Options {
	o := adminOptions
	o.Logger = log
	return o
}
