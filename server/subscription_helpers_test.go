package server_test

import (
	"context"

	"github.com/voiceapi/voiceapi/cli"
	"github.com/voiceapi/voiceapi/data"
)

// setSubscription changes a workspace's plan as the operator's CLI does: through the
// subscription service on the server's database (no HTTP route sets plans).
func (e *env) setSubscription(ctx context.Context, ws string, in data.SubscriptionSet) (*data.Subscription, error) {
	return cli.Services(e.DB).Subscriptions.SetSubscription(ctx, ws, in)
}
