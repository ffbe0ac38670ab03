package bolt_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
)

// Every recorded event waits in the outbox until the dispatcher fans it out, so the queue
// depth counts it.
func TestWebhookQueueDepthCountsTheOutbox(t *testing.T) {
	db := openTestDB(t)
	u := mustUser(t, db, "queue@example.com")
	ctx := asUser(t, db, u)
	before, err := db.WebhookQueueDepth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // three names: a rename to the name it has changes nothing and records nothing
		if _, err := cli.NewServices(db).Workspaces.UpdateWorkspace(ctx, u.PersonalWorkspaceID, data.WorkspaceUpdate{Name: data.Some(fmt.Sprintf("renamed %d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	after, err := db.WebhookQueueDepth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if after != before+3 {
		t.Fatalf("queue depth %d after 3 events, want %d", after, before+3)
	}
}
