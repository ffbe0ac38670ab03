// Package server is voiceapi's HTTP layer: the router, middleware, one file per resource
// group and the one place that maps errors to statuses.
package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/voiceapi/voiceapi/console"
	"github.com/voiceapi/voiceapi/data"
)

// Services are the storage interfaces the handlers call.
type Services struct {
	Auth           data.AuthService
	Users          data.UserService
	Workspaces     data.WorkspaceService
	WorkspaceUsers data.WorkspaceUserService
	Idempotency    data.IdempotencyStore
	Agents         data.AgentService
	KnowledgeBases data.KnowledgeBaseService
	Catalog        *data.Catalog
	Webhooks       data.WebhookService
	Audit          data.AuditService
	// Backup takes online backups (GET /api/v1/admin/backup); the route is 404 when nil.
	Backup    data.BackupService
	Numbers   data.NumberService
	Calls     data.CallService
	Analytics data.AnalyticsService
	// AnalysisFigures answers the post-call analysis figures and the export's analysis
	// columns.
	AnalysisFigures data.AnalysisFiguresService
	// Analysis runs post-call analysis by the agent's model, as jobs.
	Analysis data.AnalysisService
	// Prices keeps each workspace's price table.
	Prices        data.PriceTableService
	Subscriptions data.SubscriptionService
	// Exports exports and imports whole workspaces (conventions §17).
	Exports data.WorkspaceExportService
	// Conversations runs conversations with agents (conventions §21).
	Conversations data.ConversationService
	// Jobs reads background jobs (GET /api/v1/jobs/{job_id}) and their queues for
	// /metrics; without it the route finds no job and /metrics reports none.
	Jobs data.JobService
	// AgentTests and TestRuns are agents' tests and their runs (conventions §22).
	AgentTests data.AgentTestService
	TestRuns   data.TestRunService
	// CallStart answers POST /api/v1/calls/start (conventions §23).
	CallStart data.CallStartService
	// Rollouts manages agents' rollouts (conventions §23).
	Rollouts data.RolloutService
	// Campaigns manages campaigns and leases their dial tasks (conventions §25).
	Campaigns data.CampaignService
	// Suppressions manages the workspace's suppression list (conventions §25).
	Suppressions data.SuppressionService
	// Ready reports whether storage answers (GET /readyz).
	Ready func(ctx context.Context) error
}

// Config tunes the server. The zero value serves with no rate limits.
type Config struct {
	Addr        string
	MaxJSONBody int64
	Logger      *slog.Logger
	// RateLimit is the number of requests a minute per token; 0 turns it off (§15).
	RateLimit int
	// LoginRateLimit is the number of login attempts a minute per client address and
	// email; 0 turns it off.
	LoginRateLimit int
	// LoginAddressRateLimit is the number of failed login attempts (and refused
	// current_passwords) a minute per client address across all emails: 0 means
	// LoginAddressFactor times LoginRateLimit, a negative number turns it off.
	LoginAddressRateLimit int
	// RateCounter, when set, keeps both limits' counts where every replica sees them
	// (PostgreSQL), so a limit is the cluster's; nil counts in this process.
	RateCounter data.RateCounter
	// Now is the rate limiters' clock; time.Now when nil. Tests move it by hand.
	Now func() time.Time
	// DBStats reads the storage figures for GET /metrics; none are reported when nil.
	DBStats func() DBStats
	// QueueDepth reports the webhook queue depth for GET /metrics (0 when nil); see also
	// SetQueueDepth.
	QueueDepth func() int
	// Knowledge base uploads and url fetching (docs/knowledge-bases.md); 0 means the default.
	MaxFileSize      int64 // one uploaded file: 20 MiB
	MaxMultipartBody int64 // a whole multipart request: 50 MiB
	AllowPrivateURLs bool  // --allow-private-urls: lifts the SSRF guard
	// AllowURLPrefixes lift the SSRF guard for url sources under them (--allow-url-prefix).
	AllowURLPrefixes []string
	URLFetchTimeout  time.Duration
	URLFetchMaxBytes int64
	// MaxImportBody bounds a workspace import document; DefaultMaxImportBody when 0.
	MaxImportBody int64
	// TrustedProxies are the reverse proxies whose X-Forwarded-For and Forwarded headers
	// name the client (--trusted-proxies; see clientAddr). None when empty.
	TrustedProxies []netip.Prefix
	// Timeouts of the HTTP server (ListenAndServe); DefaultTimeouts' when zero.
	Timeouts Timeouts
	// Stream tunes the live event stream (events_stream.go).
	Stream StreamConfig
}

// Server serves the API.
type Server struct {
	svc    Services
	cfg    Config
	log    *slog.Logger
	router *mux.Router
	routes []route
	// console serves the console's pages, mounted on router.
	console *console.Handler
	// inflight holds Idempotency-Keys whose first request is running.
	inflight *inFlight
	// metrics observes each request (Prometheus); nil when not configured.
	metrics func(method, route string, status int, d time.Duration)
	// tokenLimit and loginLimit are the rate limiters; nil when off.
	tokenLimit *rateLimiter
	loginLimit *rateLimiter
	// loginAddrLimit bounds failed login attempts per client address across all emails;
	// nil when off.
	loginAddrLimit *rateLimiter
	// prom is the private Prometheus registry behind GET /metrics.
	prom *metrics
	// openapi caches the OpenAPI document, built on first request (openapi.go).
	openapi openapiDoc
	// streams are the open live event streams (events_stream.go).
	streams *streamHub
	// pages are the turns of heavy list pages (page_turns.go).
	pages pageTurns
}

// handlerFunc is a handler that returns its error instead of writing it, so that every
// failure goes through writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route is one entry of the route table: what it needs of the caller is declared here, so
// handlers hold no ad-hoc permission checks.
type route struct {
	Method string
	Path   string
	Need   data.Requirement
	// Public routes take no token (login, health).
	Public bool
	// Idempotent creating POSTs honour Idempotency-Key (conventions §17).
	Idempotent bool
	// BodyLimit overrides MaxJSONBody (uploads).
	BodyLimit int64
	// NoBody marks an action that reads no body: anything but an empty body or {} is
	// refused before it runs (middleware_nobody.go).
	NoBody bool
	// Long marks a transfer that may outlast the read or write timeout (backups,
	// exports, imports, uploads, downloads): see longTransfer.
	Long bool
	// Streams marks a route that answers text/event-stream when the request asks for it:
	// an Idempotency-Key's request hash covers which of the two was asked for.
	Streams bool
	handle  handlerFunc
	// query is what the route's description declares of its query string (addRoutes).
	query routeQuery
	// legacyRecheck, when set, makes the access checks of the route's service call again
	// before a response is replayed under an Idempotency-Key, for a response kept before
	// the agent a request acted on was kept with it (the replay checks that agent
	// otherwise: recheckReplay). Such responses expire 24 hours after an upgrade; the
	// field can go a release later (docs/upgrading.md).
	legacyRecheck func(r *http.Request, kept *data.IdempotentResponse) error
	// replayRecheck, when set, is a check every replay of the route makes beside its
	// agent's: the read of another record its answer holds, which the route's requirement
	// does not cover (a test made from a call holds the call's caller turns).
	replayRecheck func(r *http.Request, kept *data.IdempotentResponse) error
}

// New builds a server and its routes.
func New(svc Services, cfg Config) *Server {
	if cfg.MaxJSONBody == 0 {
		cfg.MaxJSONBody = MaxJSONBody
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{svc: svc, cfg: cfg, log: cfg.Logger, inflight: &inFlight{keys: map[string]bool{}}, streams: newStreamHub(), pages: newPageTurns()}
	s.tokenLimit = newRateLimiter(cfg.RateLimit, cfg.Now)
	s.loginLimit = newRateLimiter(cfg.LoginRateLimit, cfg.Now)
	addrLimit := cfg.LoginAddressRateLimit
	if addrLimit == 0 {
		addrLimit = cfg.LoginRateLimit * LoginAddressFactor
	}
	s.loginAddrLimit = newRateLimiter(addrLimit, cfg.Now)
	for _, l := range []*rateLimiter{s.tokenLimit, s.loginLimit, s.loginAddrLimit} {
		if l != nil {
			l.shared, l.log = cfg.RateCounter, s.log
		}
	}
	s.prom = newMetrics(cfg)
	if svc.Jobs != nil {
		s.prom.registry.MustRegister(&jobCollector{jobs: svc.Jobs, log: s.log})
	}
	s.metrics = s.prom.observe
	s.addRoutes(s.metricsRoutes())
	s.addRoutes(s.backupRoutes())
	s.addRoutes(s.healthRoutes())
	s.addRoutes(s.openapiRoutes())
	s.addRoutes(s.authRoutes())
	s.addRoutes(s.userRoutes())
	s.addRoutes(s.workspaceRoutes())
	s.addRoutes(s.workspaceUserRoutes())
	s.addRoutes(s.agentRoutes())
	s.addRoutes(s.webhookRoutes())
	s.addRoutes(s.auditRoutes())
	s.addRoutes(s.eventStreamRoutes())
	s.addRoutes(slices.Concat(s.numberRoutes(), s.callStartRoutes(), s.callRoutes(), s.analyticsRoutes(), s.subscriptionRoutes(),
		s.priceRoutes(), s.analysisRoutes()))
	s.addRoutes(s.knowledgeBaseRoutes())
	s.addRoutes(s.campaignRoutes())
	s.addRoutes(s.exportRoutes())
	s.addRoutes(s.conversationRoutes())
	s.addRoutes(s.jobRoutes())
	s.addRoutes(s.agentTestRoutes())
	s.buildRouter()
	return s
}

func (s *Server) addRoutes(rs []route) {
	for _, rt := range rs {
		rt.query = declaredQuery(rt.Method, rt.Path)
		// No delete reads a body: one sent anyway (text, or JSON other than {}) is refused
		// before the delete runs, as an action's is, so a garbled request deletes nothing.
		rt.NoBody = rt.NoBody || rt.Method == http.MethodDelete
		s.routes = append(s.routes, withScopes(rt))
	}
}

// buildRouter registers the route table on a gorilla/mux router, with JSON 404 and 405.
func (s *Server) buildRouter() {
	// A path is matched as sent: the router's default answered one with dot segments or
	// doubled slashes 301 to its cleaned form, so that a client following it as a DELETE
	// (as RFC 9110 allows) deleted what "…/versions/.." cleans to, the agent. Such a path
	// names no record: 404 (conventions §3). The console's own mux still cleans its pages.
	r := mux.NewRouter().SkipClean(true)
	for _, rt := range s.routes {
		methods := []string{rt.Method}
		if rt.Method == http.MethodGet {
			methods = append(methods, http.MethodHead) // Allow advertises HEAD with GET
		}
		r.Handle(rt.Path, s.wrap(rt)).Methods(methods...)
	}
	s.mountConsole(r)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.writeError(w, req, data.Errorf(data.ENOTFOUND, "No route matches %s %s.", req.Method, req.URL.Path))
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Allow", strings.Join(s.allowed(req), ", "))
		s.writeError(w, req, data.Errorf(data.EMETHOD, "%s is not allowed on %s.", req.Method, req.URL.Path))
	})
	s.router = r
}

// allowed lists the methods the router would accept for req's path.
func (s *Server) allowed(req *http.Request) []string {
	seen := map[string]bool{}
	for _, rt := range s.routes {
		if seen[rt.Method] {
			continue
		}
		probe := req.Clone(req.Context())
		probe.Method = rt.Method
		var m mux.RouteMatch
		if s.router.Match(probe, &m) && m.MatchErr == nil {
			seen[rt.Method] = true
		}
	}
	if seen[http.MethodGet] {
		seen[http.MethodHead] = true
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Handler returns the whole HTTP handler, middleware included.
func (s *Server) Handler() http.Handler { return s.observe(s.router) }

// Routes returns the route table (method and path template), for the OpenAPI check.
func (s *Server) Routes() [][2]string {
	out := make([][2]string, len(s.routes))
	for i, rt := range s.routes {
		out[i] = [2]string{rt.Method, rt.Path}
	}
	return out
}

// ListenAndServe serves on ln until ctx is done, then drains in-flight requests for up
// to drain before returning.
func (s *Server) ListenAndServe(ctx context.Context, ln net.Listener, drain time.Duration) error {
	return s.Serve(ctx, StartServing(ln, s.cfg.Timeouts, s.log), drain)
}

// Serve switches f, which answered as a starting server while the store opened, to this
// server's handler and serves until ctx is done, then drains in-flight requests for up to
// drain before returning.
func (s *Server) Serve(ctx context.Context, f *Front, drain time.Duration) error {
	// Event streams never go idle: Shutdown ends them when it begins, and they resume
	// elsewhere with Last-Event-ID.
	f.hs.RegisterOnShutdown(s.CloseStreams)
	f.Switch(s.Handler())
	return f.Run(ctx, drain)
}
