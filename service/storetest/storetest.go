// Package storetest is the storage test suite, written once against service.Store: every
// engine runs it by calling Run with a function that opens an empty store of its own.
package storetest

import (
	"context"
	"testing"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// Opener opens an empty store that lives until the test ends.
type Opener func(t testing.TB) service.Store

// suite is one group of the suite: a resource's cases, run on a fresh store each.
type suite struct {
	name string
	run  func(t *testing.T, open Opener)
}

// suites are the groups of the suite, one per resource; each file adds its own.
var suites = []suite{
	{"events", testEvents},
	{"limits", testLimits},
	{"knowledge_bases", testKnowledgeBases},
	{"knowledge_sources", testKnowledgeSources},
	{"knowledge_chunks", testKnowledgeChunks},
	{"chunks_revision", testChunksRevision},
	{"knowledge_delete", testKnowledgeDelete},
	{"knowledge_files", testKnowledgeFiles},
	{"knowledge_file_lifecycle", testKnowledgeFileLifecycle},
	{"knowledge_embeddings", testKnowledgeEmbeddings},
	{"accounts", testAccounts},
	{"accounts_lists", testAccountLists},
	{"accounts_revisions", testAccountRevisions},
	{"accounts_deletes", testAccountDeletes},
	{"workspace_delete", testWorkspaceDelete},
	{"agent_delete_members", testAgentDeleteMembers},
	{"put_api_key", testPutAPIKey},
	{"tokens_prune", testPruneTokens},
	{"webhooks", testWebhooks},
	{"deliveries", testDeliveries},
	{"deliveries_by_type", testDeliveriesByType},
	{"deliveries_by_type_after_prune", testDeliveriesByTypeAfterPrune},
	{"deliveries_hidden_uncounted", testDeliveriesHiddenUncounted},
	{"deliveries_narrowed_walks", testDeliveriesNarrowedWalks},
	{"deliveries_due_skips", testDueSkips},
	{"deliveries_prune", testPruneDeliveries},
	{"outbox", testOutbox},
	{"event_workspace", testEventWorkspace},
	{"event reads", testEventReads},
	{"events after", testEventsAfter},
	{"agents", testAgents},
	{"agent_refs", testAgentRefs},
	{"agent_json", testAgentJSON},
	{"numbers", testNumbers},
	{"number_search", testNumberSearch},
	{"name_search_folds", testNameSearchFolds},
	{"phone_number_taken", testPhoneNumberTaken},
	{"calls", testCalls},
	{"call_search", testCallSearch},
	{"call_rollups", testCallRollups},
	{"subscriptions", testSubscriptions},
	{"privacy_fields", testPrivacyFields},
	{"price_tables", testPriceTables},
	{"field_rollups", testFieldRollups},
	{"call_cost_rollups", testCallCostRollups},
	{"jobs_enqueue_in_transaction", testJobsEnqueueInTransaction},
	{"jobs_unique_keys", testJobsUniqueKeys},
	{"jobs_due_order", testJobsDueOrder},
	{"jobs_leases", testJobsLeases},
	{"jobs_concurrent_claims", testJobsConcurrentClaims},
	{"jobs_reschedule", testJobsReschedule},
	{"jobs_hasten", testJobsHasten},
	{"jobs_end_leases", testJobsEndLeases},
	{"jobs_queue_stats", testJobsQueueStats},
	{"jobs_list_and_delete", testJobsListAndDelete},
	{"jobs_list_selections", testJobsListSelections},
	{"jobs_list_status_between_pages", testJobsListStatusBetweenPages},
	{"jobs_list_rare_among_many", testJobsListRareAmongMany},
	{"jobs_prune", testJobsPrune},
}

// Run runs every group of the suite against stores made by open.
func Run(t *testing.T, open Opener) {
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) { s.run(t, open) })
	}
}

// update runs fn in a write transaction and fails the test on an error.
func update(t testing.TB, s service.Store, fn func(tx service.Tx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// view runs fn in a read transaction and fails the test on an error.
func view(t testing.TB, s service.Store, fn func(tx service.Tx) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func testEvents(t *testing.T, open Opener) {
	s := open(t)
	view(t, s, func(tx service.Tx) error {
		head, err := tx.EventHead("ws_1")
		if head != "" {
			t.Errorf("head of a workspace without events = %q, want empty", head)
		}
		return err
	})
	for i, hash := range []string{"h1", "h2"} {
		e := &data.Event{ID: []string{"evt_1", "evt_2"}[i], Type: data.EventAgentCreated, WorkspaceID: "ws_1", Data: []byte(`{}`), Hash: hash}
		update(t, s, func(tx service.Tx) error { return tx.AppendEvent(e) })
	}
	view(t, s, func(tx service.Tx) error {
		head, err := tx.EventHead("ws_1")
		if head != "h2" {
			t.Errorf("head = %q, want the newest event's hash h2", head)
		}
		other, _ := tx.EventHead("ws_2")
		if other != "" {
			t.Errorf("another workspace's head = %q, want empty", other)
		}
		return err
	})
}

func testLimits(t *testing.T, open Opener) {
	s := open(t)
	view(t, s, func(tx service.Tx) error {
		p, err := tx.SubscriptionPlan("ws_1")
		if p != nil {
			t.Errorf("plan of a workspace nobody set one for = %+v, want nil", p)
		}
		return err
	})
}
