package service

import "github.com/voiceapi/voiceapi/data"

// SubscriptionTx stores workspaces' plans (read through LimitTx.SubscriptionPlan).
type SubscriptionTx interface {
	// PutSubscriptionPlan stores the workspace's plan, replacing the one it had. A
	// workspace's delete removes its plan (a cascade).
	PutSubscriptionPlan(workspaceID string, p *data.SubscriptionPlan) error
	// WorkspaceExists reports whether the workspace is stored.
	WorkspaceExists(workspaceID string) (bool, error)
}
