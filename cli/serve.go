package cli

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/voiceapi/voiceapi/bolt"
	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/knowledge"
	"github.com/voiceapi/voiceapi/netguard"
	"github.com/voiceapi/voiceapi/postgres"
	"github.com/voiceapi/voiceapi/server"
	"github.com/voiceapi/voiceapi/service"
	"github.com/voiceapi/voiceapi/webhook"
)

// serveOptions are the flags of `voiceapi serve` (conventions §16).
type serveOptions struct {
	addr string
	loc  location
	// noMigrate refuses a PostgreSQL schema older than the binary instead of migrating.
	noMigrate bool
	loginTTL  time.Duration
	drain     time.Duration
	logLevel  string
	catalog   string

	// allowPrivateURLs and allowURLPrefixes make the SSRF guard (guard), the one
	// configuration of every URL the server calls.
	allowPrivateURLs bool
	allowURLPrefixes []string
	webhookWorkers   int
	webhookRetries   []time.Duration
	// deliveryRetention is how long finished webhook delivery records are kept; 0 keeps
	// them forever.
	deliveryRetention time.Duration
	// rateLimit and loginRateLimit are requests a minute; 0 turns a limit off.
	rateLimit      int
	loginRateLimit int
	// loginAddressRateLimit is failed logins a minute per client address; unset, ten
	// times loginRateLimit.
	loginAddressRateLimit optionalInt
	// metricsAddr, when set, serves GET /metrics without a token on a second listener.
	metricsAddr      string
	embeddingsURL    string
	embeddingsModel  string
	embeddingsAPIKey string
	// maxImportBody bounds a workspace import document, in bytes.
	maxImportBody int64
	// maxJSONBody, maxFileSize and maxMultipartBody are the limits of conventions §15.
	maxJSONBody, maxFileSize, maxMultipartBody int64
	// trustedProxies are the CIDR ranges of reverse proxies whose forwarding headers name
	// the client (server.ParseTrustedProxies).
	trustedProxies []string
	// timeouts are the HTTP server's read-header, read, write and idle timeouts.
	timeouts server.Timeouts
	// retentionInterval is the wait between two retention sweeps; 0 turns sweeping off.
	retentionInterval time.Duration
	// llm are the language model settings of conversations.
	llm llmFlags
	// jobs are the background job runner's flags (cli/serve_jobs.go).
	jobs jobOptions
	// passwordCost is the bcrypt cost of the bootstrap owner's password; 0 means the
	// production cost. Only tests set it (no flag): cost 12 takes seconds under -race.
	passwordCost int
	// lockTimeout bounds the wait for another process's lock on the bbolt file; 0 is
	// bolt's default. Only tests set it (no flag), to hold the lock as long as they need.
	lockTimeout time.Duration
}

// NewServeCommand builds `voiceapi serve`.
func NewServeCommand() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return runServe(ctx, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.register(cmd.Flags())
	return cmd
}

// register declares serve's flags on f, with their defaults, filling o.
func (o *serveOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address HOST:PORT")
	o.loc.register(f)
	f.BoolVar(&o.noMigrate, "no-migrate", false, "with --database-url: refuse to start on a schema older than this binary's instead of migrating it (deploys that run voiceapi migrate first)")
	f.DurationVar(&o.loginTTL, "login-ttl", service.DefaultLoginTTL, "lifetime of login tokens (Go duration)")
	f.DurationVar(&o.drain, "drain-timeout", 20*time.Second, "how long shutdown waits for in-flight requests")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.StringVar(&o.catalog, "catalog", "", "JSON file of models per provider that extends the embedded catalog")
	f.BoolVar(&o.allowPrivateURLs, "allow-private-urls", false, "let every URL the server calls (webhooks, knowledge base urls, embedding providers, model servers, custom functions) reach loopback and private addresses (development, tests)")
	f.StringArrayVar(&o.allowURLPrefixes, "allow-url-prefix", nil, "let URLs starting with this prefix reach private addresses through the SSRF guard, whatever calls them (a webhook receiver, a knowledge base's pages, a model server or custom function on your network, e.g. http://127.0.0.1:11434/); repeatable")
	f.IntVar(&o.webhookWorkers, "webhook-workers", webhook.DefaultWorkers, "webhook deliveries posted at once")
	f.DurationSliceVar(&o.webhookRetries, "webhook-retry-schedule", webhook.DefaultRetrySchedule, "waits before each retry of a failed webhook delivery, comma-separated")
	f.DurationVar(&o.deliveryRetention, "delivery-retention", service.DefaultDeliveryRetention, "how long finished webhook delivery records are kept before a background pass deletes them (0 keeps them forever; events and the audit log are never deleted by it)")
	f.IntVar(&o.rateLimit, "rate-limit", 300, "requests a minute per token (0 turns it off)")
	f.IntVar(&o.loginRateLimit, "login-rate-limit", 10, "login attempts a minute per client address and email (0 turns it off)")
	f.Var(&o.loginAddressRateLimit, "login-address-rate-limit", "failed login attempts a minute per client address across all emails (default ten times --login-rate-limit; 0 turns it off)")
	f.StringVar(&o.embeddingsURL, "embeddings-url", "", "OpenAI-compatible API root for knowledge base embeddings, e.g. https://api.openai.com/v1 (off when empty)")
	f.StringVar(&o.embeddingsModel, "embeddings-model", "", "embeddings model name, e.g. text-embedding-3-small")
	f.StringVar(&o.embeddingsAPIKey, "embeddings-api-key", "", "bearer token of the embeddings endpoint")
	f.Int64Var(&o.maxImportBody, "max-import-body", server.DefaultMaxImportBody, "largest workspace import document accepted, in bytes (files travel inside it in base64)")
	f.Int64Var(&o.maxJSONBody, "max-json-body", server.MaxJSONBody, "largest JSON request body accepted, in bytes")
	f.Int64Var(&o.maxFileSize, "max-file-size", server.DefaultMaxFileSize, "largest knowledge base file accepted, in bytes")
	f.Int64Var(&o.maxMultipartBody, "max-multipart-body", server.DefaultMaxMultipartBody, "largest multipart upload request accepted, in bytes")
	f.StringSliceVar(&o.trustedProxies, "trusted-proxies", nil, "CIDR ranges of reverse proxies, comma-separated: from a peer in them, the client address (login limits, logs, events) is read from X-Forwarded-For or Forwarded; from any other peer those headers are ignored")
	f.DurationVar(&o.timeouts.ReadHeader, "read-header-timeout", server.DefaultTimeouts.ReadHeader, "longest a client may take to send a request's headers")
	f.DurationVar(&o.timeouts.Read, "read-timeout", server.DefaultTimeouts.Read, "longest a client may take to send a whole request (uploads and imports: between two reads)")
	f.DurationVar(&o.timeouts.Write, "write-timeout", server.DefaultTimeouts.Write, "longest a response may take to write (backups, exports and downloads: between two writes)")
	f.DurationVar(&o.timeouts.Idle, "idle-timeout", server.DefaultTimeouts.Idle, "longest a kept-alive connection waits for its next request")
	f.DurationVar(&o.retentionInterval, "retention-interval", time.Hour, "wait between two sweeps deleting the calls and knowledge files that retention settings have expired (0 turns sweeping off)")
	o.llm.register(f)
	o.jobs.register(f)
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "also serve GET /metrics and /debug/pprof/ without a token on this HOST:PORT (keep it private); off when empty")
}

// check refuses flag values serve cannot honour and returns the log level.
func (o *serveOptions) check() (slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return level, fmt.Errorf("--log-level %q: want debug, info, warn or error", o.logLevel)
	}
	// One flag a refusal, the faulty one: nameEnvironmentSources names the variable of
	// the flag a refusal begins with.
	for _, b := range []struct {
		flag  string
		bound int64
	}{{"max-import-body", o.maxImportBody}, {"max-json-body", o.maxJSONBody}, {"max-file-size", o.maxFileSize}, {"max-multipart-body", o.maxMultipartBody}} {
		if b.bound < 0 {
			return level, fmt.Errorf("--%s must be 0 or more (0: its default size)", b.flag)
		}
	}
	// 0 would silently mean the default and a negative lifetime would hand out tokens
	// already expired: logins would answer 200 and every later request 401.
	if o.loginTTL <= 0 {
		return level, fmt.Errorf("--login-ttl must be more than 0, such as 720h (30 days, the default) or 12h")
	}
	if o.drain < 0 {
		return level, fmt.Errorf("--drain-timeout must be 0 or more, such as 20s (the default)")
	}
	if o.loc.poolSize < 0 {
		return level, fmt.Errorf("--db-pool-size must be 0 (pgx's default) or more")
	}
	for _, wait := range o.webhookRetries {
		if wait < 0 {
			return level, fmt.Errorf("--webhook-retry-schedule: %s is negative; want waits of 0 or more, such as 5s,30s,2m", wait)
		}
	}
	if o.rateLimit < 0 {
		return level, fmt.Errorf("--rate-limit must be 0 (off) or more")
	}
	if o.loginRateLimit < 0 {
		return level, fmt.Errorf("--login-rate-limit must be 0 (off) or more")
	}
	if o.loginAddressRateLimit.n < 0 {
		return level, fmt.Errorf("--login-address-rate-limit must be 0 (off) or more; leave it out for ten times --login-rate-limit")
	}
	if o.deliveryRetention < 0 {
		return level, fmt.Errorf("--delivery-retention must be 0 (keep forever) or more")
	}
	if o.retentionInterval < 0 {
		return level, fmt.Errorf("--retention-interval must be 0 (off) or more")
	}
	if o.webhookWorkers < 1 {
		return level, fmt.Errorf("--webhook-workers must be at least 1")
	}
	return level, o.jobs.check()
}

func runServe(ctx context.Context, o serveOptions, out, errOut io.Writer) error {
	set, err := o.settings()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(errOut, &slog.HandlerOptions{Level: set.level}))
	tuneGC(os.Getenv)
	// Listen before anything is opened: when the port is taken or the address is bad,
	// serve fails here having created nothing (no database, no key file in a fresh --data,
	// no owner), so the next start on a free port makes them and prints the owner's
	// one-time credentials then, instead of for a server that never ran.
	ln, err := listenAPI(o.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	var metricsLn net.Listener
	if o.metricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", o.metricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		defer metricsLn.Close()
	}
	// The bound listeners answer at once, as a starting server (503 with Retry-After,
	// /healthz 200), while the store opens: waiting for another process's lock on the
	// file or migrating the schema takes seconds to minutes, and an accepted connection
	// that hangs meanwhile looks like a dead server. They switch to the real handlers
	// once the owner exists; a failed start stops them.
	front := server.StartServing(ln, o.timeouts, logger)
	defer front.Stop(o.drain)
	var metricsFront *server.Front
	if metricsLn != nil {
		metricsFront = server.StartServing(metricsLn, metricsTimeouts, logger)
		defer metricsFront.Stop(0)
	}
	logger.Info("opening the store", "addr", ln.Addr().String(), "data", o.loc.describe())
	db, err := o.open(ctx, logger, set.guard)
	if err != nil {
		return err
	}
	defer db.Close()
	// The dispatcher starts after the database opens and stops (in-flight posts drained)
	// before it closes: the deferred Stop runs before the deferred Close.
	svc := NewServices(db)
	svc.Conversations.Configure(ConversationOptions(set.llm))
	svc.Analysis.Configure(AnalysisOptions(set.llm))
	dispatcher, stopDispatcher := o.startDispatcher(db, svc, set.guard, logger)
	defer stopDispatcher()
	srv := o.newServer(db, svc, logger, set)
	// A commit that recorded events wakes the dispatcher and the live event streams.
	db.SetEventHook(func() { dispatcher.Wake(); srv.WakeStreams() })
	if metricsFront != nil {
		serveMetrics(metricsFront, srv)
		defer metricsFront.Stop(0) // again, to stop before the database closes
		logger.Info("serving metrics", "addr", metricsLn.Addr().String())
	}
	// Both listeners are bound: only now may the owner be created and shown.
	if err := bootstrap(ctx, db, out); err != nil {
		return fmt.Errorf("first-run bootstrap: %w", err)
	}
	stopPasses := o.startPasses(ctx, db, svc, logger)
	defer stopPasses()
	logger.Info("listening", "addr", ln.Addr().String(), "data", o.loc.describe())
	err = srv.Serve(ctx, front, o.drain)
	logger.Info("stopped", "error", err)
	return err
}

// serveSettings are what serve derives from its flags before it opens anything.
type serveSettings struct {
	level   slog.Level
	proxies []netip.Prefix
	guard   netguard.Guard
	llm     LLMSettings
}

// settings checks the flags and derives the log level, the trusted proxies, the SSRF
// guard and the language model settings from them.
func (o *serveOptions) settings() (serveSettings, error) {
	var set serveSettings
	var err error
	if set.level, err = o.check(); err != nil {
		return set, err
	}
	if set.proxies, err = server.ParseTrustedProxies(o.trustedProxies); err != nil {
		return set, fmt.Errorf("--trusted-proxies: %w", err)
	}
	for _, t := range []struct {
		flag    string
		timeout time.Duration
	}{{"read-header-timeout", o.timeouts.ReadHeader}, {"read-timeout", o.timeouts.Read}, {"write-timeout", o.timeouts.Write}, {"idle-timeout", o.timeouts.Idle}} {
		if t.timeout <= 0 {
			return set, fmt.Errorf("--%s must be more than 0", t.flag)
		}
	}
	if set.guard, err = netguard.NewGuard(o.allowPrivateURLs, o.allowURLPrefixes); err != nil {
		return set, err
	}
	if set.llm, err = o.llm.settings(set.guard); err != nil {
		return set, err
	}
	return set, nil
}

// listenAPI binds the API's address, saying what to do when another server holds it.
func listenAPI(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("--addr %s: the address is already in use (another voiceapi or another server?); stop it or choose a free address with --addr", addr)
	} else if err != nil {
		return nil, fmt.Errorf("--addr %s: %w", addr, err)
	}
	return ln, nil
}

// startDispatcher starts the webhook dispatcher, woken by every commit that recorded
// events; stop unhooks it and waits up to --drain-timeout for its in-flight posts.
func (o *serveOptions) startDispatcher(db Backend, svc *service.Services, guard netguard.Guard, logger *slog.Logger) (dispatcher *webhook.Dispatcher, stop func()) {
	dispatcher = webhook.NewDispatcher(svc.Deliveries, webhook.Config{
		Workers: o.webhookWorkers, Schedule: o.webhookRetries, Logger: logger,
		AllowPrivate: guard.AllowPrivate, AllowURLPrefixes: guard.AllowURLPrefixes,
	})
	db.SetEventHook(dispatcher.Wake)
	dispatcher.Start(context.Background())
	return dispatcher, func() {
		db.SetEventHook(nil)
		stopCtx, cancel := context.WithTimeout(context.Background(), o.drain)
		defer cancel()
		if err := dispatcher.Stop(stopCtx); err != nil {
			logger.Warn("webhook dispatcher stopped before its posts finished; they stay pending", "error", err)
		}
	}
}

// rateLimits sets c's rate limits from the flags.
func (o *serveOptions) rateLimits(c *server.Config) {
	c.RateLimit, c.LoginRateLimit = o.rateLimit, o.loginRateLimit
	if a := o.loginAddressRateLimit; a.set {
		c.LoginAddressRateLimit = cmp.Or(a.n, -1) // 0 given: off (Config's 0 is the default)
	}
}

// newServer builds the API server on svc with serve's limits, guard, proxies and
// timeouts.
func (o *serveOptions) newServer(db Backend, svc *service.Services, logger *slog.Logger, set serveSettings) *server.Server {
	return NewServerOn(db, svc, logger, func(c *server.Config) {
		o.rateLimits(c)
		c.AllowPrivateURLs, c.AllowURLPrefixes = set.guard.AllowPrivate, set.guard.AllowURLPrefixes
		if q, ok := db.(queueCounter); ok {
			c.QueueDepth = func() int {
				n, err := q.WebhookQueueDepth(context.Background())
				if err != nil {
					logger.Warn("counting the webhook queue", "error", err)
				}
				return n
			}
		}
		c.MaxImportBody = o.maxImportBody
		c.TrustedProxies, c.Timeouts = set.proxies, o.timeouts
		c.MaxJSONBody, c.MaxFileSize, c.MaxMultipartBody = o.maxJSONBody, o.maxFileSize, o.maxMultipartBody
	})
}

// startPasses starts the background passes over the database and the job runner; stop
// ends them in the reverse order, each finished before it returns, and is to be called
// before the database closes.
func (o *serveOptions) startPasses(ctx context.Context, db Backend, svc *service.Services, logger *slog.Logger) (stop func()) {
	// Expired Idempotency-Key responses are deleted at start and every hour.
	purgeCtx, stopPurge := context.WithCancel(ctx)
	purged := make(chan struct{})
	go func() { defer close(purged); purgeIdempotency(purgeCtx, db, logger, time.Hour) }()
	// Finished delivery records past their retention are deleted now and then, in small
	// transactions.
	pruneCtx, stopPrune := context.WithCancel(ctx)
	pruned := make(chan struct{})
	go func() { defer close(pruned); pruneDeliveries(pruneCtx, svc.Deliveries, logger, o.deliveryRetention) }()
	// Expired tokens are deleted at start and every hour, in small transactions.
	tokensCtx, stopTokens := context.WithCancel(ctx)
	tokensPruned := make(chan struct{})
	go func() { defer close(tokensPruned); pruneTokens(tokensCtx, svc.Auth, logger) }()
	// The retention sweeper stops between two batches.
	stopSweep := func() {}
	if o.retentionInterval > 0 {
		sweepCtx, cancelSweep := context.WithCancel(ctx)
		swept := make(chan struct{})
		go func() { defer close(swept); svc.Retention.Run(sweepCtx, o.retentionInterval) }()
		stopSweep = func() { cancelSweep(); <-swept }
	}
	// Idle conversations end (expired) every minute.
	expireCtx, stopExpire := context.WithCancel(ctx)
	expired := make(chan struct{})
	go func() { defer close(expired); expireConversations(expireCtx, svc.Conversations, logger, time.Minute) }()
	// The job runner starts once the server has given the services its url fetcher, and
	// drains first.
	stopJobs := startJobs(svc, o.jobs, logger)
	return func() {
		stopJobs(o.drain)
		stopExpire()
		<-expired
		stopSweep()
		stopTokens()
		<-tokensPruned
		stopPrune()
		<-pruned
		stopPurge()
		<-purged
	}
}

// queueCounter is an engine that can count pending webhook deliveries (metrics).
type queueCounter interface {
	WebhookQueueDepth(ctx context.Context) (int, error)
}

// open loads the model catalog and the knowledge base options, then opens the records
// where --data or --database-url says.
func (o *serveOptions) open(ctx context.Context, logger *slog.Logger, guard netguard.Guard) (Backend, error) {
	cat, err := data.LoadCatalog(o.catalog)
	if err != nil {
		return nil, fmt.Errorf("--catalog: %w", err)
	}
	kopts, err := knowledgeOptions(*o, guard)
	if err != nil {
		return nil, err
	}
	if o.loc.postgres() {
		return o.loc.openPostgres(ctx, postgres.Options{LoginTTL: o.loginTTL, Logger: logger, Catalog: cat, Knowledge: kopts, PasswordCost: o.passwordCost, NoMigrate: o.noMigrate})
	}
	db, err := bolt.Open(o.loc.dir, bolt.Options{LockTimeout: o.lockTimeout, LoginTTL: o.loginTTL, Logger: logger, Catalog: cat, Knowledge: kopts, PasswordCost: o.passwordCost})
	if errors.Is(err, bolt.ErrLocked) {
		return nil, lockedData(o.loc.dir)
	}
	if err != nil {
		return nil, notPermitted(o.loc.dir, err) // not a typed nil Backend
	}
	return db, nil
}

// lockedData is serve's refusal of a bbolt file another process holds (conventions §16:
// fail fast, clearly): which file, which process when it can be told, and what to do.
// bolt's own words ("do this through the HTTP API") are an admin command's.
func lockedData(dir string) error {
	path := filepath.Join(dir, bolt.FileName)
	holder := bolt.LockHolder(path)
	if holder == "" {
		holder = "another process"
	}
	return fmt.Errorf("--data %s: %w: %s is locked by %s, and one bbolt file serves one process; stop that one first, or give this server another --data (replicas of one database need --database-url)", dir, bolt.ErrLocked, path, holder)
}

// metricsTimeouts are the metrics listener's: WriteTimeout leaves room for a CPU profile
// of up to two minutes (?seconds=120).
var metricsTimeouts = server.Timeouts{ReadHeader: 10 * time.Second, Write: 3 * time.Minute}

// serveMetrics switches the metrics listener's front to the metrics alone, without
// authentication: for a Prometheus on the same host or a private network that holds no
// API token.
func serveMetrics(front *server.Front, srv *server.Server) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", srv.MetricsHandler())
	// Profiles for the operator (docs/performance.md), on this private listener only:
	// they reveal code paths and memory contents, so never on the API's. Importing
	// net/http/pprof also registers them on http.DefaultServeMux, which nothing serves.
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	front.Switch(mux)
}

// purgeIdempotency deletes expired kept responses now, then every interval until ctx is
// done, in transactions of at most service.IdempotencyPurgeBatch, a breather apart
// (pruneLoop).
func purgeIdempotency(ctx context.Context, db Backend, logger *slog.Logger, every time.Duration) {
	pruneLoop(ctx, logger, every, "expired idempotent responses", NewServices(db).Idempotency.PurgeIdempotency, service.IdempotencyPurgeBatch)
}

// embeddingsPair refuses one of --embeddings-url and --embeddings-model without the
// other, beginning with the one given (nameEnvironmentSources then names its variable,
// where the other was most likely forgotten).
func embeddingsPair(url, model string) error {
	switch {
	case url != "" && model == "":
		return fmt.Errorf("--embeddings-url needs --embeddings-model: give both or neither")
	case url == "" && model != "":
		return fmt.Errorf("--embeddings-model needs --embeddings-url: give both or neither")
	}
	return nil
}

// knowledgeOptions configures knowledge bases from the embeddings flags: both the url and
// the model, or neither.
func knowledgeOptions(o serveOptions, guard netguard.Guard) (bolt.KnowledgeOptions, error) {
	// Workspaces' own providers are client-supplied urls: the SSRF guard applies (§14).
	k := bolt.KnowledgeOptions{EmbedClient: guard.Client(netguard.Options{Timeout: knowledge.DefaultEmbedTimeout})}
	if o.embeddingsURL == "" && o.embeddingsModel == "" {
		return k, nil
	}
	if err := embeddingsPair(o.embeddingsURL, o.embeddingsModel); err != nil {
		return k, err
	}
	if err := netguard.CheckURL(o.embeddingsURL); err != nil {
		return k, fmt.Errorf("--embeddings-url: %w", err)
	}
	k.Embedder = knowledge.NewOpenAIEmbedder(knowledge.OpenAIEmbedderConfig{BaseURL: o.embeddingsURL, Model: o.embeddingsModel, APIKey: o.embeddingsAPIKey})
	k.EmbeddingSpace, k.EmbeddingModel = service.EmbeddingSpace(o.embeddingsURL, o.embeddingsModel), o.embeddingsModel
	return k, nil
}

// bootstrap creates the first owner on an empty database and prints its credentials and
// an API token, once.
func bootstrap(ctx context.Context, db Backend, out io.Writer) error {
	svc := NewServices(db)
	n, err := svc.Users.CountUsers(ctx)
	if err != nil || n > 0 {
		return err
	}
	password, err := randomPassword(20)
	if err != nil {
		return err
	}
	u, err := svc.Users.CreateUser(ctx, data.UserCreate{Name: "Owner", Email: "owner@voiceapi.local", Password: password, IsAdmin: true})
	if data.ErrorCode(err) == data.ECONFLICT {
		return nil // another replica starting at the same time created the owner
	}
	if err != nil {
		return err
	}
	_, token, err := svc.Auth.CreateAPIKeyFor(ctx, u.ID, u.PersonalWorkspaceID, data.APIKeyCreate{Name: "bootstrap"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, `voiceapi: first start, created the owner account. These are shown only once:
  email:     %s
  password:  %s
  api token: %s
  workspace: %s
`, u.Email, password, token, u.PersonalWorkspaceID)
	return nil
}

func randomPassword(n int) (string, error) {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", err
		}
		b[i] = alphabet[k.Int64()]
	}
	return string(b), nil
}

// withAdminDB is the RunE of a one-shot command on the location *loc: it opens the
// records (a bbolt file fails fast when a server holds it), runs fn, and closes them.
func withAdminDB(loc *location, fn func(cmd *cobra.Command, db Backend) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		db, err := loc.openAdmin(cmd)
		if err != nil {
			return err
		}
		defer db.Close()
		return fn(cmd, db)
	}
}
