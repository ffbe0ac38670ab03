// Package bolt implements voiceapi's storage interfaces on bbolt: a bucket per resource,
// index buckets for workspace-scoped cursor pagination, and one transaction per change
// together with its event.
package bolt

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/lastused"
	"github.com/voiceapi/voiceapi/seal"
	"github.com/voiceapi/voiceapi/service"
)

// SecretKeyFile holds the key for credentials at rest when VOICEAPI_SECRET_KEY is unset.
const SecretKeyFile = seal.KeyFile

// FileName is the database file inside the data directory.
const FileName = "voiceapi.db"

// schemaVersion is the layout this code reads and writes; migrations lead up to it.
const schemaVersion = 31

// Bucket names. Index buckets hold keys "<scope>\x00<id>" with empty values.
var (
	bucketMeta          = []byte("meta")
	bucketUsers         = []byte("users")
	bucketUsersByEmail  = []byte("users_by_email")
	bucketUsersIndex    = []byte("users_index")
	bucketWorkspaces    = []byte("workspaces")
	bucketMembers       = []byte("members")     // "<ws>\x00<user>" → member row
	bucketMemberships   = []byte("memberships") // "<user>\x00<ws>" → empty
	bucketAPIKeys       = []byte("api_keys")    // hex id → key row
	bucketAPIKeysByUser = []byte("api_keys_by_user")
	bucketAPIKeysByWS   = []byte("api_keys_by_ws")
	// "<kind>\x00<expiry, 16 hex digits of Unix milliseconds><hex id>" → empty, for the
	// token pass (auth.go, DeleteExpiredTokens); tokens without an expiry are not in it.
	bucketAPIKeysByExpiry = []byte("api_keys_by_expiry")
	bucketEvents          = []byte("events")
	bucketEventsByWS      = []byte("events_by_ws")
	bucketEventHeads      = []byte("event_heads") // ws → hash of its newest event
	bucketOutbox          = []byte("outbox")      // event id → empty, until dispatched
	bucketIdempotency     = []byte("idempotency")
	// "<conversation id>\x00<token id><key>" → empty: the responses kept for a
	// conversation's messages, which its end deletes (DeleteConversationResponses).
	bucketIdempotencyByConversation = []byte("idempotency_by_conversation")
	bucketAgents                    = []byte("agents")           // agent id → agent row, with its workspace_id
	bucketKnowledgeBase             = []byte("knowledge_bases")  // kb id → knowledge base row, with its workspace_id
	bucketAgentsByWS                = []byte("agents_by_ws")     // scope workspace
	bucketAgentsByState             = []byte("agents_by_status") // scope "<workspace>/<status>"
	bucketAgentVersions             = []byte("agent_versions")   // "<agent>\x00<%010d version>" → version row
)

// allBuckets is every bucket Open creates.
var allBuckets = [][]byte{
	bucketMeta, bucketUsers, bucketUsersByEmail, bucketUsersIndex, bucketWorkspaces,
	bucketMembers, bucketMemberships, bucketAPIKeys, bucketAPIKeysByUser, bucketAPIKeysByWS, bucketAPIKeysByExpiry,
	bucketEvents, bucketEventsByWS, bucketEventHeads, bucketOutbox, bucketIdempotency, bucketIdempotencyByConversation,
	bucketAgents, bucketKnowledgeBase, bucketAgentsByWS, bucketAgentsByState, bucketAgentVersions,
	bucketWebhooks, bucketWebhooksByWS, bucketDeliveries, bucketDeliveriesByWebhook, bucketDeliveriesDue,
	bucketNumbers, bucketNumbersByPhone, bucketNumbersByWS, bucketNumbersByAgent, bucketCalls, bucketCallScopes, bucketCallEntries, bucketCallScopeCounts, bucketCallRollups, bucketCallMinutes, bucketSubscriptions,
	bucketCallPostingDocs, bucketCallEventRefs,
	bucketKBByWS, bucketKBSources, bucketKBChunks, bucketKBPendingURLs,
	bucketPriceTables, bucketCallAnalysisValues, bucketCallFieldRollups,
	bucketJobs, bucketJobsDue, bucketJobsByWS, bucketJobsUnique,
}

// Registration points: each resource adds its function here (one line each), so that a
// deletion reaches every kind of record in the same transaction.
var (
	// workspaceCascades delete every record of one resource kind in a workspace. Members,
	// tokens and events are removed after them.
	workspaceCascades = []func(db *DB, tx *bbolt.Tx, workspaceID string) error{
		deleteWorkspaceAgents,
		func(db *DB, tx *bbolt.Tx, ws string) error { return deleteWorkspaceWebhooks(tx, ws) },
		func(db *DB, tx *bbolt.Tx, ws string) error { return deleteWorkspaceNumbers(tx, ws) },
		func(db *DB, tx *bbolt.Tx, ws string) error { return deleteWorkspaceCalls(tx, ws) },
		func(db *DB, tx *bbolt.Tx, ws string) error { return deleteWorkspaceAnalysis(tx, ws) },
		func(db *DB, tx *bbolt.Tx, ws string) error { return deleteWorkspaceSubscription(tx, ws) },
		deleteWorkspaceKnowledgeBases,
		func(db *DB, tx *bbolt.Tx, ws string) error { return deleteWorkspaceJobs(tx, ws) },
	}
	// agentDeleteHooks run inside an agent's delete transaction (unbind numbers, drop it
	// from members' agent_ids, ...).
	agentDeleteHooks = []func(db *DB, tx *bbolt.Tx, workspaceID, agentID string) error{
		func(db *DB, tx *bbolt.Tx, ws, agentID string) error { return removeAgentFromMembers(tx, ws, agentID) },
	}
	// knowledgeBaseDeleteHooks run inside a knowledge base's delete transaction (drop it
	// from agents' knowledge_base_ids, ...).
	knowledgeBaseDeleteHooks = []func(db *DB, tx *bbolt.Tx, workspaceID, kbID string) error{
		removeKnowledgeBaseFromAgents,
	}
)

// Options tune a DB. The zero value is production: fsync on, bcrypt cost 12.
type Options struct {
	// LockTimeout bounds the wait for another process's lock on the file.
	LockTimeout time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// PasswordCost is the bcrypt cost; service.DefaultPasswordCost when 0. Tests lower it.
	PasswordCost int
	// LoginTTL is the lifetime of login tokens; service.DefaultLoginTTL when 0.
	LoginTTL time.Duration
	// NoSync turns fsync off. Only tests may set it.
	NoSync bool
	// SecretKey is the 32-byte key for credentials at rest; when nil it comes from
	// VOICEAPI_SECRET_KEY or a key file in the data directory.
	SecretKey []byte
	// Logger receives background errors; slog.Default when nil.
	Logger *slog.Logger
	// Catalog lists the models valid per provider; the embedded one when nil.
	Catalog *data.Catalog
	// Knowledge configures knowledge base sources, chunks and retrieval.
	Knowledge KnowledgeOptions
}

// DB is the open database and the services built on it.
type DB struct {
	bolt   *bbolt.DB
	dir    string
	now    func() time.Time
	ids    *data.IDGen
	opts   Options
	sealer *seal.Sealer
	log    *slog.Logger

	cursorKey []byte // signs pagination cursors, so tampered or foreign ones are refused

	// eventHook is called after a commit that recorded events (the webhook dispatcher).
	hookMu    sync.RWMutex
	eventHook func()

	touch   *lastused.Batcher
	commits *committer // group commit of db.update
	refs    refCache   // which event a new one may reference (events_ref.go)

}

// ErrLocked is returned when another process holds the database.
var ErrLocked = errors.New("database is in use by another process")

// heldBy is " by <LockHolder>", or "" when the holder cannot be told.
func heldBy(path string) string {
	if h := LockHolder(path); h != "" {
		return " by " + h
	}
	return ""
}

// Open opens (creating if needed) the database in dir.
func Open(dir string, opts Options) (*DB, error) {
	if opts.LockTimeout == 0 {
		opts.LockTimeout = 3 * time.Second
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
	if err := checkRestoreFinished(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: opts.LockTimeout, NoSync: opts.NoSync, FreelistType: bbolt.FreelistMapType})
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s is locked%s (is `voiceapi serve` running on it?); stop the server first, or do this through the HTTP API", ErrLocked, path, heldBy(path))
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	// bbolt grows a file past its AllocSize by what it needs plus AllocSize, 16 MiB by
	// default: a tail of up to 16 MiB no page uses (half the file of 1,000 agents). Each
	// growth costs a truncate and an fsync, so 1 MiB steps cost one more fsync every
	// megabyte written.
	bdb.AllocSize = allocSize
	if err := migrateDocs(bdb, opts.Logger); err != nil {
		bdb.Close()
		return nil, err
	}
	db := &DB{bolt: bdb, dir: dir, now: opts.Now, opts: opts, log: opts.Logger}
	db.ids = &data.IDGen{Now: opts.Now, Rand: rand.Reader}
	if err := db.init(); err != nil {
		bdb.Close()
		return nil, err
	}
	s, err := seal.Load(dir, opts.SecretKey)
	if err != nil {
		bdb.Close()
		return nil, err
	}
	db.sealer = s
	db.commits = newCommitter(bdb)
	db.touch = lastused.Start(db.writeUses, db.log)
	if err := db.openKnowledge(); err != nil {
		db.touch.Stop()
		db.commits.stop()
		bdb.Close()
		return nil, err
	}
	return db, nil
}

// allocSize is the step the file grows by once past it.
const allocSize = 1 << 20

// init creates buckets, the cursor key and runs migrations, in one transaction.
func (db *DB) init() error {
	from := 0
	err := db.bolt.Update(func(tx *bbolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("creating bucket %s: %w", name, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		if meta.Get([]byte("cursor_key")) == nil {
			key := make([]byte, 32)
			if _, err := rand.Read(key); err != nil {
				return err
			}
			if err := meta.Put([]byte("cursor_key"), key); err != nil {
				return err
			}
		}
		db.cursorKey = append([]byte(nil), meta.Get([]byte("cursor_key"))...)
		var err error
		if from, err = migrate(tx); err != nil {
			return err
		}
		return unlimitOwnersAndAdmins(tx)
	})
	// docs/upgrading.md has the operator watch the log at the upgraded start: say that the
	// migrations ran, once they have committed (a new file, version 0, has none to run).
	if err == nil && from > 0 && from < schemaVersion {
		db.log.Info("migrated the database to this voiceapi's schema", "from_schema_version", from, "schema_version", schemaVersion)
	}
	return err
}

// migrations[i] moves the schema from version i to i+1. Version 0 is a new file.
var migrations = []func(tx *bbolt.Tx) error{
	func(tx *bbolt.Tx) error { return nil }, // 0 → 1: the buckets above, created by init
	// 1 → 2: values may be deflated against a dictionary (record.go, markDeflateDict1).
	// Nothing is rewritten (earlier values read as they are); the version is raised so
	// that an older binary, which could not read the new values, refuses the file at
	// start instead of failing on the first such record.
	func(tx *bbolt.Tx) error { return nil },
	// 2 → 3: a term's postings were packed in blocks of call ids; and a call event may
	// reference an earlier event's payload instead of copying it (events_ref.go). Old
	// events read as they are.
	func(tx *bbolt.Tx) error { return nil },
	// 3 → 4: the call list index is keyed by scope numbers (calls_entries.go), postings
	// name calls by docID (calls_slots.go, calls_postings.go), storage keeps no term lists
	// (migrateDocs moved a schema 2 or 3 file's indexes before this runs), and events are
	// written in a binary form (events_binary.go; old forms read as they are).
	func(tx *bbolt.Tx) error { return nil },
	// 4 → 5: post-call analysis and cost (analysis.go): price tables, each call's analysis
	// values and the per-field rollups, new buckets init creates empty; call rollups gain
	// cost members (calls stored before have no cost, so nothing is rewritten). The
	// version is raised so that an older binary, which would write calls without keeping
	// these, refuses the file.
	func(tx *bbolt.Tx) error { return nil },
	// 5 → 6: the call-start contract (call_start.go): the open calls of each workspace are
	// indexed (filled here from the calls' status scopes) and agents have rollouts (a new
	// bucket, empty). An older binary would end calls without unindexing them, so the
	// version keeps it out.
	fillOpenCalls,
	// 6 → 7: each workspace's suppression list keeps its count (suppressions.go), filled
	// here from the lists. An older binary would add and remove numbers without moving
	// the counts, so the version keeps it out.
	countSuppressionLists,
	// 7 → 8: each job is indexed under the scopes of the job list's filters
	// (jobs_index.go), filled here from the stored jobs in this one transaction, which
	// also raises the version. An older binary would change a job's status without
	// moving its entries, so the version keeps it out.
	listJobsOfStore,
	// 8 → 9: a pending job's entries are one scope for queued and running, the status in
	// their values (jobs_index.go), moved here from schema 8's two. An older binary would
	// look for them in the scopes they left, so the version keeps it out.
	mergePendingJobScopes,
	// 9 → 10: a canceled campaign stays in the open index while recipients are in
	// progress (campaigns.go), so claims return their leases; filled here from the stored
	// campaigns. An older binary would drop such a campaign from the index with its
	// leases still out, so the version keeps it out.
	indexDrainingCampaigns,
	// 10 → 11: each workspace's active conversations are indexed with their last update
	// and lease (conversations.go), for the bound on open conversations; filled here
	// from the active ones (indexOpenConversations).
	indexOpenConversations,
	// 11 → 12: ended conversations are indexed by the call each became
	// (conversations.go), so a call's delete takes its conversation along, and listed
	// for the job that redacts them (service/conversation_upgrade.go); filled here from
	// the stored conversations (indexEndedConversations).
	indexEndedConversations,
	// 12 → 13: tokens with an expiry are indexed by it (auth.go), so that the token pass
	// deletes expired ones without reading every token; filled here (indexTokenExpiries).
	// An older binary would add and delete tokens without their entries, so the version
	// keeps it out.
	indexTokenExpiries,
	// 13 → 14: each workspace keeps the count of its campaigns' recipients (campaigns.go),
	// for the bound on kept recipients; filled here from the stored campaigns
	// (countKeptCampaigns). An older binary would add campaigns without counting them, so
	// the version keeps it out.
	countKeptCampaigns,
	// 14 → 15: a response kept for a conversation's message is listed under the
	// conversation (idempotency.go), whose end deletes it. Responses kept before carry no
	// conversation and expire within a day, as before; an older binary would keep new
	// ones without their entries, so the version keeps it out.
	func(*bbolt.Tx) error { return nil },
	// 15 → 16: every stored agent is listed for the job that seals the credential
	// headers stored in the clear in agents and their versions
	// (service/agent_seal_upgrade.go, listAgentsToSeal). An older binary would not run
	// the job, so the version keeps it out.
	listAgentsToSeal,
	// 16 → 17: kept Idempotency-Key responses are indexed by the time each was kept
	// (idempotency.go), so that the purge goes in batches without walking every one;
	// filled here (indexIdempotencyByTime).
	indexIdempotencyByTime,
	// 17 → 18: campaigns_deleting lists every deleted campaign with recipients left,
	// which a check reads to queue their delete job again when it gave up
	// (service/campaign_delete_requeue.go); filled here with the campaigns deleted before
	// the list was kept (listOrphanedRecipients). An older binary would not re-queue
	// them, so the version keeps it out.
	listOrphanedRecipients,
	// 18 → 19: a response kept for a conversation's start is listed under the
	// conversation (idempotency.go), whose end redacts it. Responses kept before carry no
	// conversation and expire within a day, as before; an older binary would keep new
	// ones without their entries, so the version keeps it out.
	func(*bbolt.Tx) error { return nil },
	// 19 → 20: the responses kept with status 201 before a start's answer named its
	// conversation are listed under their token's workspace (listStartsToNote) for the
	// job that notes a start's with its conversation, redacting it when the
	// conversation already ended (service/idempotency_start_upgrade.go). An older binary
	// would not run the job, so the version keeps it out.
	listStartsToNote,
	// 20 → 21: a response kept with an answer for a request to an agent's conversation
	// (a start, a message) is listed under the agent (idempotency.go), whose delete cuts
	// it to its claim. Filled by the next step, which lists what this one did and more.
	// An older binary would keep new ones without their entries, so the version keeps it
	// out.
	func(*bbolt.Tx) error { return nil },
	// 21 → 22: every response kept with an answer and an agent (a call's start or
	// registration, a test, a test run, an analysis, a backfill, a campaign's create, as
	// well as a conversation's start or message) is listed under the agent, whose delete
	// cuts it to its claim; filled here (indexIdempotencyByAgent). An older binary would
	// keep new ones unlisted, so the version keeps it out.
	indexIdempotencyByAgent,
	// 22 → 23: a campaign's recipients are listed by stored state (campaigns_state.go),
	// for the recipient list's state filter; filled here (indexRecipientStates). An older
	// binary would change a recipient's state without moving its entry, so the version
	// keeps it out.
	indexRecipientStates,
	// 23 → 24: a response kept under an Idempotency-Key is listed under the workspace its
	// request acted in (idempotency.go, bucketIdempotencyByWorkspace), whose delete and a
	// member's removal take it. Responses kept before name no workspace, which only the
	// request knew (a path's {workspace_id}; their bodies are sealed), so none is listed:
	// they go with their token as before, or expire within the day. An older binary would
	// keep new ones unlisted, so the version keeps it out.
	func(*bbolt.Tx) error { return nil },
	// 24 → 25: conversations are listed by workspace and by agent with their status
	// (conversations_list.go), for GET /api/v1/conversations; filled here from the stored
	// conversations (listConversationsOfStore). An older binary would start, end and
	// delete conversations without their entries, so the version keeps it out.
	listConversationsOfStore,
	// 25 → 26: conversations are listed by status too (conversations_by_status), so that
	// a status filter's page walks only its status's entries, filled here from the
	// schema-25 list's entries (statusesOfListed); campaigns are listed by workspace,
	// agent and status (campaigns_list.go), filled from the stored campaigns
	// (listCampaignsOfStore). An older binary would start, end and delete them without
	// moving these entries, so the version keeps it out.
	func(tx *bbolt.Tx) error {
		if err := statusesOfListed(tx); err != nil {
			return err
		}
		return listCampaignsOfStore(tx)
	},
	// 26 → 27: events are listed by type and by actor too (events_by_facet,
	// audit_index.go), so that an audit page filtered by either walks only its events,
	// filled here from the stored events (listEventFacetsOfStore). An older binary would
	// record events without these entries, so the version keeps it out.
	listEventFacetsOfStore,
	// 27 → 28: deliveries are listed by webhook and type too (deliveries_by_type,
	// deliveries_index.go), so that a page for a caller that reads some types walks
	// only theirs, filled here from the stored deliveries (listDeliveryTypesOfStore). An
	// older binary would store deliveries without these entries, so the version keeps
	// it out.
	listDeliveryTypesOfStore,
	// 28 → 29: events are listed by the agent they are about and type too
	// (events_by_facet, audit_agents.go), so that a page of a caller limited to some
	// agents walks only theirs, filled here from the stored events
	// (listEventAgentsOfStore). An older binary would record events without these
	// entries, so the version keeps it out.
	listEventAgentsOfStore,
	// 29 → 30: events with a kind (a job.failed's job kind) are listed by it too
	// (events_by_facet, audit_kinds.go), so that a page of a caller who reads some job
	// kinds walks only theirs, filled here from the stored events of those types
	// (listEventKindsOfStore). An older binary would record events without these entries,
	// so the version keeps it out.
	listEventKindsOfStore,
	// 30 → 31: events are listed by their chain time, with each workspace's clock
	// (events_by_time, event_clocks: events_time.go), so that a time window seeks to its
	// events, filled here from the stored events (listEventTimesOfStore). An older binary
	// would record events without these entries, so the version keeps it out.
	listEventTimesOfStore,
}

// migrate runs the migrations from the stored version up to schemaVersion and returns
// the version it found.
func migrate(tx *bbolt.Tx) (int, error) {
	meta := tx.Bucket(bucketMeta)
	current := 0
	if v := meta.Get([]byte("schema_version")); len(v) == 8 {
		current = int(binary.BigEndian.Uint64(v))
	}
	if current > schemaVersion {
		return current, fmt.Errorf("the database has schema version %d, newer than this voiceapi (%d): upgrade voiceapi, or to roll back restore a backup taken before the upgrade (docs/upgrading.md, Rollback)", current, schemaVersion)
	}
	for v := current; v < schemaVersion; v++ {
		if err := migrations[v](tx); err != nil {
			return current, fmt.Errorf("migrating schema %d → %d: %w", v, v+1, err)
		}
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], schemaVersion)
	return current, meta.Put([]byte("schema_version"), buf[:])
}

// SchemaVersion returns the schema version stored in the file.
func (db *DB) SchemaVersion() (int, error) {
	var v int
	err := db.bolt.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketMeta).Get([]byte("schema_version"))
		if len(b) == 8 {
			v = int(binary.BigEndian.Uint64(b))
		}
		return nil
	})
	return v, err
}

// Close flushes pending bookkeeping and closes the file.
func (db *DB) Close() error {
	db.touch.Stop()
	db.commits.stop()
	return db.bolt.Close()
}

// Catalog returns the model catalog validation uses.
func (db *DB) Catalog() *data.Catalog { return db.opts.Catalog }

// Dir returns the data directory.
func (db *DB) Dir() string { return db.dir }

// CheckConsistency runs bbolt's consistency check and returns its first fault, then
// checks that the job list index agrees with the jobs (jobListingFault). It runs
// in a writable transaction, rolled back: on a read-only one the check reads the
// freelist without the writer's lock, which races with a commit of the background
// bookkeeping (bbolt documents Check as safe only beside no writer then).
func (db *DB) CheckConsistency() error {
	tx, err := db.bolt.Begin(true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var first error
	// Drain the channel: Check's goroutine holds the transaction until it has sent
	// every fault.
	for fault := range tx.Check() {
		if first == nil {
			first = fault
		}
	}
	if first == nil {
		first = jobListingFault(tx)
	}
	return first
}

// Bolt exposes the underlying database (consistency checks, backups, stats).
func (db *DB) Bolt() *bbolt.DB { return db.bolt }

// Ping checks that the database answers (readiness).
func (db *DB) Ping(ctx context.Context) error {
	return db.bolt.View(func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketMeta) == nil {
			return errors.New("meta bucket missing")
		}
		return nil
	})
}

// SetEventHook registers fn to run after every commit that recorded events.
func (db *DB) SetEventHook(fn func()) {
	db.hookMu.Lock()
	db.eventHook = fn
	db.hookMu.Unlock()
}

// update runs fn in a write transaction. Concurrent callers share a commit and its
// fsync (group commit, see committer); fn may be run more than once, so it must only
// touch the transaction.
func (db *DB) update(fn func(tx *bbolt.Tx) error) error {
	return db.commits.update(fn)
}

// view runs fn in a read transaction.
func (db *DB) view(fn func(tx *bbolt.Tx) error) error {
	return db.bolt.View(fn)
}

// Seal encrypts a credential for storage (for other packages' records).
func (db *DB) Seal(plain string) (string, error) { return db.sealer.Seal(plain) }

// Unseal decrypts a stored credential.
func (db *DB) Unseal(sealed string) (string, error) { return db.sealer.Open(sealed) }

// Options returns the options the database was opened with, defaults filled in.
func (db *DB) Options() Options { return db.opts }

// ServiceOptions are the service layer's options for this database: its clock, sealer,
// catalog, logger, bcrypt cost, login lifetime, knowledge options and id generator.
func (db *DB) ServiceOptions() service.Options {
	o := db.opts
	return service.Options{
		Now: o.Now, Sealer: db.sealer, Catalog: o.Catalog, Logger: o.Logger,
		PasswordCost: o.PasswordCost, LoginTTL: o.LoginTTL, IDs: db.ids, Knowledge: o.Knowledge,
	}
}

// Sealer returns the credential sealer under the instance's key.
func (db *DB) Sealer() *seal.Sealer { return db.sealer }

// IDs returns the id generator of this database's records: the services share it while
// some resources still make their records here, so that event ids keep the chain order.
func (db *DB) IDs() *data.IDGen { return db.ids }
