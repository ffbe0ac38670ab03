// Package service implements every data service once, over a Store: it validates each
// input (once, every fault in one 422), authorizes the caller (role, modules, agent_ids),
// checks quotas, merges, builds each change's event and audit link, and hands the result
// to one storage transaction. Storage engines (bolt/, and later postgres/) implement the
// narrow Store interface and hold no rule; server/ and the console call these services.
package service

import (
	"crypto/rand"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/netguard"
	"github.com/voiceapi/voiceapi/seal"
)

// Options configure the services. Sealer is required; the rest have defaults.
type Options struct {
	// Now is the clock; time.Now when nil. Tests inject one.
	Now func() time.Time
	// Sealer encrypts credentials at rest.
	Sealer *seal.Sealer
	// Catalog lists the models valid per provider; the embedded one when nil.
	Catalog *data.Catalog
	// Logger receives background errors; slog.Default when nil.
	Logger *slog.Logger
	// PasswordCost is the bcrypt cost; 12 when 0. Tests lower it.
	PasswordCost int
	// LoginTTL is the lifetime of login tokens; 720h when 0.
	LoginTTL time.Duration
	// Knowledge configures knowledge bases: the source limit and the embedder.
	Knowledge KnowledgeOptions
	// IDs makes record ids; a generator on Now when nil. Event ids order the audit
	// chain, so every writer of a store must share one generator.
	IDs *data.IDGen
	// LeaseDeliveries makes a claimed webhook delivery's lease durable (its next attempt
	// moves forward in the claiming write), for a store that several processes share;
	// New sets it when the store says it is shared (SharedStore). A store one process
	// owns (bbolt's file lock) keeps claims in the dispatcher's memory instead, so a
	// restart after a crash posts what was in flight at once, not after the lease.
	LeaseDeliveries bool
	// URLGuard checks a client-supplied URL before it is stored (a webhook's url, a
	// knowledge base's url source): nil when acceptable, else why not. netguard.CheckURL
	// when nil. Where the URL's host resolves is checked later, when connecting, by
	// netguard's client.
	URLGuard func(rawURL string) error
	// Conversations configure conversations with agents: the model clients, the custom
	// function caller, the lease of a message.
	Conversations ConversationOptions
	// Analysis configures post-call analysis: the model clients (AnalysisOptions).
	Analysis AnalysisOptions
}

// base is what every resource's service shares.
type base struct {
	store   Store
	now     func() time.Time
	ids     *data.IDGen
	sealer  *seal.Sealer
	catalog *data.Catalog
	log     *slog.Logger
	opts    Options
	// kbIndexes are the retrieval indexes of knowledge bases; a workspace's delete drops
	// its own.
	kbIndexes *indexCache
	// chainKey keys the audit chain's links (chainHash).
	chainKey []byte
	// revisionKey keys the draft revisions the publish gate compares (draftRevision).
	revisionKey []byte
	// urlGuard is Options.URLGuard.
	urlGuard func(rawURL string) error
	// redactors caches compiled redaction settings (service/redaction.go).
	redactors *redactors
	// passwords checks passwords against their hashes (service/passwords.go).
	passwords *passwordChecker
	// redactHook, when set (tests), runs just before a call is redacted, outside any
	// transaction.
	redactHook func(workspaceID string)
	// jobs are the registered job kinds and the runners to wake (service/jobs.go).
	jobs *jobRegistry
	// versions caches published versions for call starts and concurrency counts
	// (service/call_start_versions.go).
	versions *versionCache
	// providers caches workspaces' embedding providers (service/knowledge_embeddings.go).
	providers providers
	// shared says several processes may use the store at once (SharedStore: PostgreSQL
	// replicas); else one process alone opens it (bbolt's file lock).
	shared bool
	// suppressionMax, when above 0 (tests: LowerSuppressionBound), bounds the suppression
	// list instead of validate.MaxSuppressions.
	suppressionMax atomic.Int64
}

// Services are the implementations of the data services, one per resource, built on one
// Store.
type Services struct {
	Auth           *AuthService
	Users          *UserService
	Workspaces     *WorkspaceService
	WorkspaceUsers *WorkspaceUserService
	Idempotency    *IdempotencyService
	KnowledgeBases *KnowledgeBaseService
	// Webhooks implements data.WebhookService.
	Webhooks *WebhookService
	// Deliveries implements data.DeliveryQueue, the webhook dispatcher's side of storage.
	Deliveries *DeliveryService
	// Audit implements data.AuditService and verifies the audit chain.
	Audit *AuditService
	// Agents implements data.AgentService, with its cached JSON reads.
	Agents *AgentService
	// Numbers implements data.NumberService.
	Numbers *NumberService
	// Calls implements data.CallService.
	Calls *CallService
	// Analytics implements data.AnalyticsService and data.AnalysisFiguresService.
	Analytics *AnalyticsService
	// Prices implements data.PriceTableService.
	Prices *PriceTableService
	// Analysis implements data.AnalysisService: post-call analysis by the agent's model.
	Analysis *AnalysisService
	// Subscriptions implements data.SubscriptionService.
	Subscriptions *SubscriptionService
	// Exports implements data.WorkspaceExportService.
	Exports *ExportService
	// Backup implements data.BackupService over the store's snapshots.
	Backup *BackupService
	// Retention sweeps what retention settings have expired.
	Retention *RetentionService
	// Conversations implements data.ConversationService.
	Conversations *ConversationService
	// Jobs registers job kinds, enqueues and reads jobs, and builds their runners.
	Jobs *JobService
	// AgentTests implements data.AgentTestService; TestRuns data.TestRunService.
	AgentTests *AgentTestService
	TestRuns   *TestRunService
	// CallStart implements data.CallStartService (conventions §23).
	CallStart *CallStartService
	// Rollouts implements data.RolloutService.
	Rollouts *RolloutService
	// Campaigns implements data.CampaignService (conventions §25).
	Campaigns *CampaignService
	// Suppressions implements data.SuppressionService.
	Suppressions *SuppressionService
}

// DefaultPasswordCost is the bcrypt cost of stored passwords when none is configured.
const DefaultPasswordCost = 12

// DefaultLoginTTL is the lifetime of a login token when none is configured (§16: 720h).
const DefaultLoginTTL = 720 * time.Hour

// New builds the services on store.
func New(store Store, opts Options) (*Services, error) {
	if opts.Sealer == nil {
		return nil, errors.New("service: a sealer is required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.PasswordCost == 0 {
		opts.PasswordCost = DefaultPasswordCost
	}
	if opts.LoginTTL == 0 {
		opts.LoginTTL = DefaultLoginTTL
	}
	if opts.URLGuard == nil {
		opts.URLGuard = netguard.CheckURL
	}
	if opts.Catalog == nil {
		cat, err := data.LoadCatalog("")
		if err != nil {
			return nil, err
		}
		opts.Catalog = cat
	}
	if opts.IDs == nil {
		opts.IDs = &data.IDGen{Now: opts.Now, Rand: rand.Reader}
	}
	shared := false
	if s, ok := store.(SharedStore); ok && s.SharedByProcesses() {
		opts.LeaseDeliveries, shared = true, true
	}
	b := &base{
		now: opts.Now, sealer: opts.Sealer, catalog: opts.Catalog, log: opts.Logger, opts: opts,
		ids: opts.IDs, chainKey: ChainKey(opts.Sealer), revisionKey: opts.Sealer.DeriveKey(draftRevisionInfo), urlGuard: opts.URLGuard, kbIndexes: newIndexCache(),
		redactors: &redactors{}, jobs: newJobRegistry(), shared: shared, versions: &versionCache{},
		passwords: &passwordChecker{cost: opts.PasswordCost},
	}
	b.store = claimingStore{Store: store, b: b}
	kbs := newKnowledgeBases(b)
	svc := &Services{
		Auth:           &AuthService{base: b, cache: &tokenCache{}},
		Users:          &UserService{b},
		Workspaces:     &WorkspaceService{b},
		WorkspaceUsers: &WorkspaceUserService{b},
		Idempotency:    &IdempotencyService{b},
		KnowledgeBases: kbs,
		Webhooks:       &WebhookService{b},
		Deliveries:     &DeliveryService{b},
		Audit:          &AuditService{b},
		Agents:         &AgentService{base: b},
		Numbers:        &NumberService{b},
		Calls:          &CallService{b},
		Analytics:      &AnalyticsService{b},
		Prices:         &PriceTableService{b},
		Analysis:       newAnalysisService(b),
		Subscriptions:  &SubscriptionService{base: b},
		Exports:        newExportService(b),
		Backup:         newBackupService(b, store),
		Retention:      &RetentionService{b},
		Conversations:  newConversations(b, kbs),
		Jobs:           &JobService{b},
		AgentTests:     &AgentTestService{base: b, agents: &AgentService{base: b}},
		CallStart:      &CallStartService{base: b},
		Rollouts:       &RolloutService{b},
		Suppressions:   &SuppressionService{b},
	}
	svc.TestRuns = newTestRuns(b, svc.Conversations, kbs)
	svc.Subscriptions.conversations = svc.Conversations
	svc.Campaigns = &CampaignService{base: b, starts: svc.CallStart}
	// Every kind of background job is registered here, so every process knows it.
	svc.Jobs.Register(svc.KnowledgeBases.urlFetchKind())
	svc.Jobs.Register(svc.KnowledgeBases.embedKind())
	for _, k := range svc.Analysis.kinds() {
		svc.Jobs.Register(k)
	}
	svc.Jobs.Register(svc.TestRuns.jobKind())
	svc.Jobs.Register(svc.Campaigns.startKind())
	svc.Jobs.Register(svc.Campaigns.recipientsDeleteKind())
	svc.Jobs.Register(svc.Conversations.redactEndedKind())
	svc.Jobs.Register(svc.Conversations.noteStartsKind())
	svc.Jobs.Register(svc.Agents.sealHeadersKind())
	svc.Jobs.Register(svc.Agents.cutKeptAnswersKind())
	svc.Jobs.Register(svc.Idempotency.deleteTokenAnswersKind())
	return svc, nil
}

// timeNow is the clock as the records' time type.
func (b *base) timeNow() data.Time { return data.NewTime(b.now()) }
