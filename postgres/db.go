// Package postgres implements voiceapi's storage interfaces on PostgreSQL: one table per
// record kind with real columns, constraints and indexes, so operators can query them with
// SQL, and any number of stateless replicas can share one database.
package postgres

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/lastused"
	"github.com/voiceapi/voiceapi/seal"
	"github.com/voiceapi/voiceapi/service"
)

// Options tune a DB. The zero value is production except for URL, which is required.
type Options struct {
	// URL is the connection string (postgres://user:pass@host:port/db?sslmode=...).
	URL string
	// MaxConns bounds the connection pool; 0 leaves pgx's default (4, or the number
	// of CPUs when larger).
	MaxConns int32
	// DataDir holds the secret key file when SecretKey and VOICEAPI_SECRET_KEY are unset.
	DataDir string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// PasswordCost is the bcrypt cost; service.DefaultPasswordCost when 0. Tests lower it.
	PasswordCost int
	// LoginTTL is the lifetime of login tokens; service.DefaultLoginTTL when 0.
	LoginTTL time.Duration
	// SecretKey is the 32-byte key for credentials at rest; when nil it comes from
	// VOICEAPI_SECRET_KEY or the key file in DataDir.
	SecretKey []byte
	// Logger receives background errors; slog.Default when nil.
	Logger *slog.Logger
	// Catalog lists the models valid per provider; the embedded one when nil.
	Catalog *data.Catalog
	// Knowledge configures knowledge base sources, chunks and retrieval.
	Knowledge service.KnowledgeOptions
	// NoMigrate refuses to start on a schema older than this binary's instead of
	// migrating it (replicas of an operator who runs `voiceapi migrate` on deploy).
	NoMigrate bool
}

// DB is an open PostgreSQL database.
type DB struct {
	pool *pgxpool.Pool
	// shared runs the statements concurrent requests share (cache checks, rate counts),
	// one connection each, apart from the requests' pool: see sharedPoolConfig.
	shared    *pgxpool.Pool
	opts      Options
	ids       *data.IDGen
	sealer    *seal.Sealer
	log       *slog.Logger
	cursorKey []byte // signs pagination cursors; shared by every replica through meta

	hookMu    sync.RWMutex
	eventHook func()
	touch     *lastused.Batcher
	revisions *revisionBatcher
	rates     *batcher[*rateCount]
	// fence refuses writes once a newer binary has migrated the database (fence.go).
	fence *fence
}

var _ service.Store = (*DB)(nil)

// ErrKeyMismatch is returned by Open when the secret key differs from the one the
// database's credentials were sealed with.
var ErrKeyMismatch = errors.New("the secret key differs from the one this database was set up with")

// ErrKeyNotOffered marks an Open that failed before the secret key reached the database
// (an unreachable server, a failed migration): the database holds nothing sealed with it
// nor its check value, so a key file made for this start may go with it. A failure
// later, in the transaction that stores the check value, does not say whether it
// committed.
var ErrKeyNotOffered = errors.New("the secret key was not offered to the database")

// keyNotOffered is a failure marked ErrKeyNotOffered; its message is its cause's.
type keyNotOffered struct{ error }

func (e keyNotOffered) Unwrap() []error { return []error{e.error, ErrKeyNotOffered} }

// Open connects, migrates the schema (under an advisory lock, so replicas starting
// together migrate once) and checks that the secret key is the database's.
func Open(ctx context.Context, opts Options) (*DB, error) {
	db, err := open(ctx, opts)
	var offered keyOffered
	if errors.As(err, &offered) {
		return nil, offered.error
	}
	if err != nil {
		return nil, keyNotOffered{err}
	}
	return db, nil
}

// keyOffered is a failure of open once the key's check value was sent (startRows).
type keyOffered struct{ error }

func (e keyOffered) Unwrap() error { return e.error }

func open(ctx context.Context, opts Options) (*DB, error) {
	if opts.URL == "" {
		return nil, errors.New("postgres: no database URL")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PasswordCost == 0 {
		opts.PasswordCost = service.DefaultPasswordCost
	}
	if opts.LoginTTL == 0 {
		opts.LoginTTL = service.DefaultLoginTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Catalog == nil {
		cat, err := data.LoadCatalog("")
		if err != nil {
			return nil, err
		}
		opts.Catalog = cat
	}
	cfg, err := pgxpool.ParseConfig(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("postgres: the database URL: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	sealer, err := seal.Load(opts.DataDir, opts.SecretKey)
	if err != nil {
		return nil, err
	}
	readCommittedSessions(cfg)
	db := &DB{opts: opts, sealer: sealer, log: opts.Logger}
	for _, p := range []struct {
		pool **pgxpool.Pool
		cfg  *pgxpool.Config
	}{{&db.pool, cfg}, {&db.shared, sharedPoolConfig(cfg)}} {
		if *p.pool, err = pgxpool.NewWithConfig(ctx, p.cfg); err != nil {
			db.closePools()
			return nil, fmt.Errorf("postgres: %w", err)
		}
	}
	db.ids = &data.IDGen{Now: opts.Now, Rand: rand.Reader}
	db.revisions = newRevisionBatcher(db.readRevisions, revisionStatementsInFlight)
	db.rates = &batcher[*rateCount]{run: db.countRequests, maxInFlight: rateStatementsInFlight}
	all, err := Migrations()
	if err != nil {
		db.closePools()
		return nil, err
	}
	db.fence = newFence(all)
	if err := db.setUp(ctx); err != nil {
		db.closePools()
		return nil, err
	}
	db.touch = lastused.Start(db.writeUses, db.log)
	go db.watchSchema()
	return db, nil
}

// readCommittedSessions makes every connection of every pool made from cfg start its
// session at READ COMMITTED, whatever the database's, role's or URL's
// default_transaction_isolation: the transactions that need more say so (View:
// REPEATABLE READ; Update: SERIALIZABLE, tx.go), and what runs outside them needs no
// more and must not get more. Those statements (rate counting and its clean-up, the
// revision checks, last_used_at's flush, source files, the webhook queue's depth, the
// start's rows, migrations under their lock) each read or write committed rows in one
// statement, so one statement's snapshot is all the consistency they need.
// At SERIALIZABLE they would fail where replicas update one row at once (a busy key's
// rate window: 40001, "concurrent update", and the request with it) and, reading what
// writes read, join the writes' conflict graph and make them fail and retry (as the
// flush did: docs/performance.md, BenchmarkRecheckContention); at READ COMMITTED
// PostgreSQL tracks none of it. TestStatementsOutsideTransactionsRunReadCommitted.
func readCommittedSessions(cfg *pgxpool.Config) {
	withRuntimeParam(cfg, "default_transaction_isolation", "read committed")
}

// withRuntimeParam sets a parameter every connection of c starts its session with.
func withRuntimeParam(c *pgxpool.Config, name, value string) *pgxpool.Config {
	params := make(map[string]string, len(c.ConnConfig.RuntimeParams)+1)
	for k, v := range c.ConnConfig.RuntimeParams {
		params[k] = v
	}
	params[name] = value
	c.ConnConfig.RuntimeParams = params
	return c
}

// sharedPoolConfig is the requests' pool configuration for the shared statements'
// connections: one for each batcher (each runs one statement at a time), so a shared
// statement never waits behind requests for a pooled connection; and generic plans. The
// statements take arrays whose lengths vary with the batch, so PostgreSQL's default
// would plan each execution anew for its array sizes (a custom plan looks cheaper than
// the generic one): 243-268 µs a cache check, 140 µs with the plan kept.
func sharedPoolConfig(cfg *pgxpool.Config) *pgxpool.Config {
	c := cfg.Copy()
	c.MaxConns = revisionStatementsInFlight + rateStatementsInFlight
	c.MinConns = 0
	return withRuntimeParam(c, "plan_cache_mode", "force_generic_plan")
}

// setUp migrates (or checks the schema), then writes and reads the rows a start needs
// (startRows).
func (db *DB) setUp(ctx context.Context) error {
	if db.opts.NoMigrate {
		if err := CheckSchema(ctx, db.pool); err != nil {
			return err
		}
	} else if applied, err := MigrateWithWaits(ctx, db.pool, func(waited time.Duration) {
		db.log.Warn("migrating: waiting for the writes under way on every replica to end (the fence's lock); writes wait meanwhile",
			"waited", waited.Round(time.Second).String())
	}); err != nil {
		return err
	} else if len(applied) > 0 {
		// docs/upgrading.md has the operator watch the upgraded start's log for this.
		db.log.Info("migrated the database to this voiceapi's schema", "applied", applied, "schema_version", applied[len(applied)-1])
	}
	if err := db.startRows(ctx); err != nil {
		return keyOffered{err}
	}
	return nil
}

// startRows reads the cursor key and checks the secret key against the database's check
// value, each created by the first replica to start, and sweeps leftover knowledge base
// files (sweepOrphanFiles), in one write transaction: behind the fence (writeOnce), as
// every write is, since a newer binary may migrate between Migrate's check and here.
func (db *DB) startRows(ctx context.Context) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	var swept int64
	err := db.writeOnce(ctx, func(t *tx) error {
		if _, err := t.exec(`INSERT INTO meta (name, value) VALUES ('cursor_key', $1) ON CONFLICT (name) DO NOTHING`, key); err != nil {
			return fmt.Errorf("postgres: storing the cursor key: %w", err)
		}
		if err := t.queryRow(`SELECT value FROM meta WHERE name = 'cursor_key'`).Scan(&db.cursorKey); err != nil {
			return fmt.Errorf("postgres: reading the cursor key: %w", err)
		}
		if err := db.checkSecretKey(t); err != nil {
			return err
		}
		if err := checkMoveFinished(t); err != nil {
			return err
		}
		var err error
		swept, err = sweepOrphanFiles(t)
		return err
	})
	if err != nil {
		return err
	}
	if swept > 0 {
		db.log.Info("removed leftover knowledge base files", "count", swept)
	}
	return nil
}

// keyCheck is a value derived from the secret key that reveals nothing of it; the
// database keeps the first replica's, and every later start must derive the same.
func (db *DB) keyCheck() []byte {
	m := hmac.New(sha256.New, db.sealer.DeriveKey("voiceapi key check"))
	m.Write([]byte("voiceapi secret key check v1"))
	return m.Sum(nil)
}

func (db *DB) checkSecretKey(t *tx) error {
	mine := db.keyCheck()
	if _, err := t.exec(`INSERT INTO meta (name, value) VALUES ('secret_key_check', $1) ON CONFLICT (name) DO NOTHING`, mine); err != nil {
		return fmt.Errorf("postgres: storing the key check: %w", err)
	}
	var stored []byte
	if err := t.queryRow(`SELECT value FROM meta WHERE name = 'secret_key_check'`).Scan(&stored); err != nil {
		return fmt.Errorf("postgres: reading the key check: %w", err)
	}
	if !hmac.Equal(stored, mine) {
		return fmt.Errorf("%w (check value %s…, this replica's %s…): start every replica with the same VOICEAPI_SECRET_KEY or key file, or credentials sealed by one could not be opened by another",
			ErrKeyMismatch, hex.EncodeToString(stored[:4]), hex.EncodeToString(mine[:4]))
	}
	return nil
}

// Close flushes pending bookkeeping (on pool) and closes the pools.
func (db *DB) Close() error {
	db.fence.stopWatching()
	db.touch.Stop()
	db.closePools()
	return nil
}

// closePools closes the pools that are open.
func (db *DB) closePools() {
	for _, p := range []*pgxpool.Pool{db.pool, db.shared} {
		if p != nil {
			p.Close()
		}
	}
}

// Pool is the connection pool (tools and tests).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Ping reports whether the database answers and is still this binary's (readiness): it
// reads the schema version (fence.go) in place of an empty statement, so a replica
// behind a load balancer's health checks costs no reading more.
func (db *DB) Ping(ctx context.Context) error {
	return db.checkSchemaVersion(ctx)
}

// SetEventHook sets the function called after a commit that recorded events or queued a
// delivery (the webhook dispatcher's wake-up).
func (db *DB) SetEventHook(fn func()) {
	db.hookMu.Lock()
	db.eventHook = fn
	db.hookMu.Unlock()
}

func (db *DB) wake() {
	db.hookMu.RLock()
	fn := db.eventHook
	db.hookMu.RUnlock()
	if fn != nil {
		fn()
	}
}

// Options returns the options db was opened with, defaults filled in.
func (db *DB) Options() Options { return db.opts }

// Catalog returns the model catalog.
func (db *DB) Catalog() *data.Catalog { return db.opts.Catalog }

// Sealer returns the sealer of credentials at rest.
func (db *DB) Sealer() *seal.Sealer { return db.sealer }

// IDs returns the id generator.
func (db *DB) IDs() *data.IDGen { return db.ids }

// ServiceOptions are the service layer's options for this database.
func (db *DB) ServiceOptions() service.Options {
	o := db.opts
	return service.Options{
		Now: o.Now, Sealer: db.sealer, Catalog: o.Catalog, Logger: o.Logger,
		PasswordCost: o.PasswordCost, LoginTTL: o.LoginTTL, IDs: db.ids, Knowledge: o.Knowledge,
	}
}

// SharedByProcesses implements service.SharedStore: replicas share the database.
func (db *DB) SharedByProcesses() bool { return true }
